package sdk

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

func writeLines(w http.ResponseWriter, lines ...string) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	for _, l := range lines {
		w.Write([]byte(l + "\n"))
	}
}

func TestProcessLogs(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/sandboxes/box/processes/web/logs", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.RawQuery {
		case "follow=true&offset=2": // the first two chunks were dropped
			writeLines(w,
				`{"type":"stdout","seq":4,"data":"b3V0"}`,
				`{"type":"heartbeat"}`,
				`{"type":"stderr","seq":5,"data":"ZXJy"}`,
				`{"type":"exit","seq":5,"exitCode":143,"signal":"SIGTERM"}`)
		case "":
			writeLines(w, `{"type":"stdout","seq":1,"data":"b3V0"}`, `{"type":"end","seq":1}`)
		default: // a stream that breaks off
			writeLines(w, `{"type":"stdout","seq":1,"data":"b3V0"}`)
		}
	})
	c := newTestServer(t, mux)
	ctx := context.Background()
	var out, errb bytes.Buffer
	res, err := c.ProcessLogs(ctx, "box", "web", LogsOptions{Offset: 2, Follow: true}, &out, &errb)
	if err != nil || out.String() != "out" || errb.String() != "err" {
		t.Fatalf("follow: %+v %v %q %q", res, err, out.String(), errb.String())
	}
	if *res != (LogsResult{LastSeq: 5, Exited: true, ExitCode: 143, Signal: "SIGTERM", Gap: true}) {
		t.Fatalf("result %+v", res)
	}
	res, err = c.ProcessLogs(ctx, "box", "web", LogsOptions{}, nil, nil)
	if err != nil || *res != (LogsResult{LastSeq: 1}) {
		t.Fatalf("snapshot: %+v %v", res, err)
	}
	if _, err := c.ProcessLogs(ctx, "box", "web", LogsOptions{Offset: 9}, nil, nil); !errors.Is(err, ErrStreamEnded) {
		t.Fatalf("broken stream: %v", err)
	}
	if _, err := c.ProcessLogs(ctx, "box", "", LogsOptions{}, nil, nil); err == nil {
		t.Fatal("empty process id accepted")
	}
}

func TestWaitErrors(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/sandboxes/box/processes/web/wait-for-port", func(w http.ResponseWriter, r *http.Request) {
		writeErr(w, http.StatusConflict, CodeProcessExited, "process web exited before port 80 was ready")
	})
	mux.HandleFunc("POST /v1/sandboxes/box/processes/web/wait", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("timeoutSeconds") != "1.5" {
			t.Errorf("query %q", r.URL.RawQuery)
		}
		writeErr(w, http.StatusServiceUnavailable, CodeWaitTimeout, "process web did not exit")
	})
	c := newTestServer(t, mux)
	ctx := context.Background()
	if _, err := c.WaitForPort(ctx, "box", "web", WaitForPortRequest{Port: 80}); !IsProcessExited(err) || IsWaitTimeout(err) {
		t.Fatalf("wait-for-port: %v", err)
	}
	if _, err := c.WaitProcess(ctx, "box", "web", 1500*time.Millisecond); !IsWaitTimeout(err) {
		t.Fatalf("wait: %v", err)
	}
}

func TestWatch(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/sandboxes/box/watch", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("path") != "/w" || q.Get("recursive") != "true" || len(q["exclude"]) != 2 {
			t.Errorf("query %q", r.URL.RawQuery)
		}
		writeLines(w,
			`{"type":"ready","path":"/w","isDir":true}`,
			`{"type":"create","path":"/w/a"}`,
			`{"type":"heartbeat"}`,
			`{"type":"rename","path":"/w/b","oldPath":"/w/a"}`,
			`{"type":"error","error":{"code":"INSTANCE_LOST","message":"gone"}}`)
	})
	c := newTestServer(t, mux)
	w, err := c.Watch(context.Background(), "box", WatchOptions{Path: "/w", Recursive: true, Exclude: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if ev, err := w.Next(); err != nil || ev.Type != "create" || ev.Path != "/w/a" {
		t.Fatalf("first: %+v %v", ev, err)
	}
	if ev, err := w.Next(); err != nil || ev.Type != "rename" || ev.OldPath != "/w/a" {
		t.Fatalf("second: %+v %v", ev, err)
	}
	var apiErr *APIError
	if _, err := w.Next(); !errors.As(err, &apiErr) || apiErr.Code != "INSTANCE_LOST" {
		t.Fatalf("end: %v", err)
	}
}

func TestAttachPTYNotFound(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/sandboxes/box/ptys/nope/attach", func(w http.ResponseWriter, r *http.Request) {
		writeErr(w, http.StatusNotFound, "PTY_NOT_FOUND", "no terminal")
	})
	c := newTestServer(t, mux)
	if _, err := c.AttachPTY(context.Background(), "box", "nope"); !IsNotFound(err) {
		t.Fatalf("attach: %v", err)
	}
}
