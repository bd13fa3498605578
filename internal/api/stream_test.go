package api

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/wire"
)

// withAgent gives sb1 a fake agent serving h on a unix socket.
func withAgent(t *testing.T, f *fakeSandboxes, h http.HandlerFunc) {
	t.Helper()
	dir, err := os.MkdirTemp("", "sbx-api-") // short: a socket path
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	l, err := net.Listen("unix", filepath.Join(dir, agentapi.AgentSock))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	f.agent = agentapi.NewClient(dir)
	t.Cleanup(f.agent.Close)
}

// agentStream answers with these NDJSON lines, then ends the stream.
func agentStream(lines ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		agentapi.WriteHeader(w)
		for _, l := range lines {
			io.WriteString(w, l+"\n")
		}
	}
}

// events reads an NDJSON answer's event types and its last error.
func events(t *testing.T, rec *httptest.ResponseRecorder) (types []string, last wire.ErrorBody) {
	t.Helper()
	if rec.Code != 200 || rec.Header().Get("Content-Type") != agentapi.ContentTypeNDJSON {
		t.Fatalf("answer %d %q: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	sc := bufio.NewScanner(rec.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev struct {
			Type  string
			Error *wire.ErrorBody
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Bytes(), err)
		}
		types = append(types, ev.Type)
		if ev.Error != nil {
			last = *ev.Error
		}
	}
	return types, last
}

func TestRelayPassesAFinishedStream(t *testing.T) {
	s, f := newTestServer(t)
	withAgent(t, f, agentStream(`{"type":"start","pid":7}`, `{"type":"stdout","seq":1,"data":"aGk="}`, `{"type":"exit","exitCode":0}`))
	rec := do(s, "POST", "/v1/sandboxes/sb1/exec?stream=true", testKey, `{"cmd":["true"]}`)
	if types, _ := events(t, rec); strings.Join(types, ",") != "start,stdout,exit" {
		t.Fatalf("events %v", types)
	}
}

func TestRelayReportsABrokenStream(t *testing.T) {
	s, f := newTestServer(t)
	withAgent(t, f, agentStream(`{"type":"start","pid":7}`))
	types, last := events(t, do(s, "POST", "/v1/sandboxes/sb1/exec?stream=true", testKey, `{"cmd":["true"]}`))
	if strings.Join(types, ",") != "start,error" || last.Code != wire.CodeInstanceLost {
		t.Fatalf("events %v, last error %+v", types, last)
	}
	// A run's "error" event is the code's exception, not the end.
	types, last = events(t, do(s, "POST", "/v1/sandboxes/sb1/run?stream=true", testKey, `{"language":"python","code":"1/0"}`))
	if strings.Join(types, ",") != "start,error" || last.Code != wire.CodeInstanceLost {
		t.Fatalf("run: events %v, last error %+v", types, last)
	}
}

// An over-long line is its own error, not a lost instance (it used to be
// reported as INSTANCE_LOST).
func TestRelayReportsAnOverlongLine(t *testing.T) {
	s, f := newTestServer(t)
	huge := `{"type":"stdout","data":"` + strings.Repeat("A", agentapi.MaxLine) + `"}`
	withAgent(t, f, agentStream(`{"type":"start","pid":7}`, huge, `{"type":"exit","exitCode":0}`))
	types, last := events(t, do(s, "POST", "/v1/sandboxes/sb1/exec?stream=true", testKey, `{"cmd":["true"]}`))
	if strings.Join(types, ",") != "start,error" || last.Code != wire.CodeStreamLineTooLong || !strings.Contains(last.Message, "longer than") {
		t.Fatalf("events %v, last error %+v", types, last)
	}
}

// An agent's error before the stream begins passes as it is; requests that
// do not stream are proxied without the client's API key.
func TestToolboxPassesAnswers(t *testing.T) {
	s, f := newTestServer(t)
	var sawAuth, sawPath string
	withAgent(t, f, func(w http.ResponseWriter, r *http.Request) {
		sawAuth, sawPath = r.Header.Get("Authorization"), r.URL.Path
		if r.URL.Path == agentapi.Exec.Path {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			io.WriteString(w, `{"error":{"code":"INVALID_EXEC","message":"cmd is empty"}}`)
			return
		}
		io.WriteString(w, `[]`)
	})
	wantError(t, do(s, "POST", "/v1/sandboxes/sb1/exec?stream=true", testKey, `{}`), 400, wire.CodeInvalidExec)
	rec := do(s, "GET", "/v1/sandboxes/sb1/files/list?path=/", testKey, "")
	if rec.Code != 200 || rec.Body.String() != "[]" || sawPath != "/files/list" || sawAuth != "" {
		t.Fatalf("proxy: %d %q, agent saw path %q auth %q", rec.Code, rec.Body, sawPath, sawAuth)
	}
	// No agent: a clear 503.
	f.agent.Close()
	f.agent = agentapi.NewClient(t.TempDir())
	wantError(t, do(s, "GET", "/v1/sandboxes/sb1/files/list?path=/", testKey, ""), 503, wire.CodeSandboxUnavailable)
}
