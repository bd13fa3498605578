package sdk

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestLifecycleCalls(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("PATCH /v1/sandboxes/{id}", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		// Only the fields set go on the wire; 0 is a value, not "unset".
		if string(b) != `{"autoStopSeconds":0,"keepAlive":true}` {
			t.Errorf("PATCH body %s", b)
		}
		writeJSON(w, http.StatusOK, Sandbox{ID: "sbx-1", KeepAlive: true})
	})
	mux.HandleFunc("POST /v1/sandboxes/{id}/wait", func(w http.ResponseWriter, r *http.Request) {
		if q := r.URL.RawQuery; q != "state=stopped&timeoutSeconds=2" {
			t.Errorf("wait query %q", q)
		}
		writeErr(w, http.StatusServiceUnavailable, "WAIT_TIMEOUT", "not yet")
	})
	mux.HandleFunc("GET /v1/sandboxes/{id}/events", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("follow") != "true" || r.URL.Query().Get("after") != "7" {
			t.Errorf("events query %q", r.URL.RawQuery)
		}
		io.WriteString(w, `{"type":"event","seq":8,"sandboxId":"sbx-1","state":"stopped","reason":"idle"}
{"type":"heartbeat"}
{"type":"event","seq":9,"sandboxId":"sbx-1","state":"deleted","reason":"ttl"}
`)
	})
	mux.HandleFunc("GET /v1/sandboxes/{id}/logs", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"type":"data","data":"aGVs"}
{"type":"data","data":"bG8K"}
{"type":"end"}
`)
	})
	c := newTestServer(t, mux)
	ctx := context.Background()
	if sb, err := c.UpdateSandbox(ctx, "box", UpdateSandboxRequest{AutoStopSeconds: Ptr(0), KeepAlive: Ptr(true)}); err != nil || !sb.KeepAlive {
		t.Errorf("UpdateSandbox = %+v, %v", sb, err)
	}
	if _, err := c.WaitForStop(ctx, "box", 1500*time.Millisecond); !IsWaitTimeout(err) || !IsUnavailable(err) {
		t.Errorf("WaitForStop = %v, want WAIT_TIMEOUT", err)
	}
	var got []string
	err := c.FollowEvents(ctx, "box", EventOptions{After: 7}, func(e Event) error {
		got = append(got, string(e.State)+"/"+e.Reason)
		return nil
	})
	if err != nil || strings.Join(got, " ") != "stopped/idle deleted/ttl" {
		t.Errorf("FollowEvents = %v, %v", got, err)
	}
	var logs strings.Builder
	if err := c.MainLogs(ctx, "box", true, &logs); err != nil || logs.String() != "hello\n" {
		t.Errorf("MainLogs = %q, %v", logs.String(), err)
	}
}

func TestEventLineJSON(t *testing.T) {
	b, _ := json.Marshal(EventLine{Type: "event", Event: &Event{Seq: 3, SandboxID: "sbx-1", State: StateStarted}})
	if !strings.HasPrefix(string(b), `{"type":"event","seq":3,"sandboxId":"sbx-1"`) {
		t.Errorf("event line %s: the event's fields must be inline", b)
	}
	b, _ = json.Marshal(EventLine{Type: "heartbeat"})
	if string(b) != `{"type":"heartbeat"}` {
		t.Errorf("heartbeat %s", b)
	}
}

// TestMainLogChunks: the options go to the daemon as its query, and each
// chunk's time reaches the callback.
func TestMainLogChunks(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/sandboxes/{id}/logs", func(w http.ResponseWriter, r *http.Request) {
		if q := r.URL.RawQuery; q != "follow=true&since=2026-12-04T10%3A00%3A00Z&tail=0&timestamps=true" {
			t.Errorf("logs query %q", q)
		}
		io.WriteString(w, `{"type":"data","data":"aGkK","time":"2026-12-04T10:00:01Z"}
{"type":"end"}
`)
	})
	c := newTestServer(t, mux)
	since := time.Date(2026, 12, 4, 11, 0, 0, 0, time.FixedZone("CET", 3600))
	var got []string
	err := c.MainLogChunks(context.Background(), "box", MainLogsOptions{Follow: true, Tail: Ptr(0), Since: since, Timestamps: true},
		func(data []byte, at *time.Time) error {
			got = append(got, at.UTC().Format(time.RFC3339)+" "+string(data))
			return nil
		})
	if err != nil || strings.Join(got, "|") != "2026-12-04T10:00:01Z hi\n" {
		t.Errorf("MainLogChunks = %q, %v", got, err)
	}
}
