package integration

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// TestJSONLogs: with --log-format json every line of the daemon's log is a
// JSON object; each API request has an access line with its route pattern,
// status, duration, sandbox and request id; state changes and shutdown are
// logged; and no API key, preview token or wrong key appears anywhere.
func TestJSONLogs(t *testing.T) {
	d := startDaemon(t, "--log-format", "json", "--log-level", "debug")
	ctx := context.Background()
	d.create(sdk.CreateSandboxRequest{Name: "logs"})
	res, err := d.client.Exec(ctx, "logs", sdk.ExecRequest{Shell: "mkdir -p /www && echo hi > /www/index.html && busybox httpd -p 8080 -h /www"})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("start httpd: %+v %v", res, err)
	}
	port, err := d.client.ExposePort(ctx, "logs", sdk.ExposePortRequest{Port: 8080})
	if err != nil {
		t.Fatal(err)
	}
	get := func(url string, hdr map[string]string) (int, http.Header) {
		req, _ := http.NewRequest("GET", url, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header
	}
	// A preview with its token in the query.
	waitFor(t, 10*time.Second, "the preview", func() bool {
		status, _ := get("http://"+d.addr+"/v1/sandboxes/logs/ports/8080/index.html?sbx_token="+port.Token, nil)
		return status == 200
	})
	// A wrong key in the Authorization header, with the caller's request id.
	const wrongKey = "wrong-key-7f3a9c"
	status, h := get("http://"+d.addr+"/v1/sandboxes", map[string]string{"Authorization": "Bearer " + wrongKey, "X-Request-Id": "caller-req-1"})
	if status != 401 || h.Get("X-Request-Id") != "caller-req-1" {
		t.Fatalf("wrong key: %d, X-Request-Id %q", status, h.Get("X-Request-Id"))
	}
	// A PTY WebSocket, ended by its shell's exit.
	p, err := d.client.CreatePTY(ctx, "logs", sdk.CreatePTYRequest{Cols: 80, Rows: 24})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := d.client.AttachPTY(ctx, "logs", p.ID)
	if err != nil {
		t.Fatal(err)
	}
	conn.Write([]byte("exit 0\n"))
	io.Copy(io.Discard, conn)
	conn.Close()
	// A restart, so the reconciler says what it did with the sandbox.
	d.stop()
	d.start()
	if err := d.client.DeleteSandbox(ctx, "logs", true); err != nil {
		t.Fatal(err)
	}
	d.stop() // the shutdown lines

	raw, err := os.ReadFile(filepath.Join(d.dataDir, "daemon.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{d.token, port.Token, wrongKey} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("the log holds a secret %q", secret)
		}
	}
	var access, states []map[string]any
	msgs := map[string]bool{}
	for i, line := range strings.Split(strings.TrimRight(string(raw), "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %d is not JSON: %q: %v", i+1, line, err)
		}
		msg, _ := m["msg"].(string)
		msgs[msg] = true
		switch msg {
		case "request":
			access = append(access, m)
		case "sandbox state":
			states = append(states, m)
		}
	}
	find := func(route string, status float64) map[string]any {
		for _, m := range access {
			if m["route"] == route && m["status"] == status {
				return m
			}
		}
		t.Fatalf("no access line for %s with status %v among %d", route, status, len(access))
		return nil
	}
	for _, m := range access {
		for _, k := range []string{"method", "route", "status", "duration", "bytes", "requestId", "client"} {
			if _, ok := m[k]; !ok {
				t.Fatalf("access line without %s: %v", k, m)
			}
		}
	}
	if m := find("GET /v1/sandboxes", 401); m["requestId"] != "caller-req-1" {
		t.Errorf("the 401 line's requestId: %v", m)
	}
	if m := find("GET /v1/sandboxes/{id}/ports/{port}/{path...}", 200); m["sandbox"] != "logs" {
		t.Errorf("preview line: %v", m)
	}
	find("POST /v1/sandboxes", 201)
	find("POST /v1/sandboxes/{id}/exec", 200)
	if m := find("GET /v1/sandboxes/{id}/ptys/{pty}/attach", 101); m["sandbox"] != "logs" {
		t.Errorf("PTY line: %v", m)
	}
	if !msgs["reconciled sandbox"] {
		t.Error("no reconcile line after the restart")
	}
	var sawStarted bool
	for _, m := range states {
		sawStarted = sawStarted || m["state"] == string(sdk.StateStarted)
	}
	if !sawStarted || !msgs["sbx shutting down: no new requests; sandboxes keep running"] || !msgs["sbx stopped"] {
		t.Errorf("state lines %v; shutdown logged: %v", states, msgs)
	}
}
