package api

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// captureLog sends the default logger's lines, as JSON, to the returned
// buffer for the rest of the test.
func captureLog(t *testing.T) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	return &buf
}

// logLines parses every line of buf as a JSON object.
func logLines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q is not JSON: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// TestAccessLog: one line per request with the route pattern, status,
// sandbox and request id; the caller's well-formed id is echoed back.
func TestAccessLog(t *testing.T) {
	buf := captureLog(t)
	s, _ := newTestServer(t)
	req := httptest.NewRequest("GET", "/v1/sandboxes/nosuch", nil)
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set(RequestIDHeader, "trace-42:a.b_c")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if got := rec.Header().Get(RequestIDHeader); got != "trace-42:a.b_c" {
		t.Fatalf("X-Request-Id %q, want the caller's", got)
	}
	lines := logLines(t, buf)
	if len(lines) != 1 {
		t.Fatalf("want 1 access line, got %d: %s", len(lines), buf)
	}
	l := lines[0]
	want := map[string]any{"msg": "request", "method": "GET", "route": "GET /v1/sandboxes/{id}", "status": float64(404), "sandbox": "nosuch", "requestId": "trace-42:a.b_c", "client": req.RemoteAddr}
	for k, v := range want {
		if l[k] != v {
			t.Errorf("%s = %v, want %v (line %v)", k, l[k], v, l)
		}
	}
	for _, k := range []string{"duration", "bytes"} {
		if _, ok := l[k]; !ok {
			t.Errorf("access line lacks %s: %v", k, l)
		}
	}
}

// TestRequestIDRejected: an id too long or with unsafe characters is
// replaced by a new one, never echoed or logged.
func TestRequestIDRejected(t *testing.T) {
	buf := captureLog(t)
	s, _ := newTestServer(t)
	for _, bad := range []string{"has space", "new\nline", "quote\"", strings.Repeat("a", maxRequestID+1)} {
		req := httptest.NewRequest("GET", "/no-such-route", nil)
		req.Header.Set(RequestIDHeader, bad)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		got := rec.Header().Get(RequestIDHeader)
		if !regexp.MustCompile(`^[0-9a-f]{24}$`).MatchString(got) {
			t.Errorf("incoming id %q: answered X-Request-Id %q, want a new one", bad, got)
		}
		if strings.Contains(buf.String(), bad) || !strings.Contains(buf.String(), got) {
			t.Errorf("incoming id %q: the log %q should name %q only", bad, buf, got)
		}
	}
}

// TestAccessLogNoSecrets: neither the API key nor a preview token or
// signature in the query reaches the log.
func TestAccessLogNoSecrets(t *testing.T) {
	buf := captureLog(t)
	s, _ := newTestServer(t)
	do(s, "GET", "/v1/sandboxes/box/ports/8080/index.html?sbx_token=PREVIEWTOKEN&sbx_sig=SIGNATURE&sbx_expires=1", testKey, "")
	do(s, "GET", "/v1/sandboxes", "WRONGKEY", "")
	do(s, "GET", "/v1/sandboxes", testKey, "")
	for _, secret := range []string{testKey, "WRONGKEY", "PREVIEWTOKEN", "SIGNATURE", "index.html"} {
		if strings.Contains(buf.String(), secret) {
			t.Errorf("log holds %q:\n%s", secret, buf)
		}
	}
	lines := logLines(t, buf)
	if len(lines) != 3 || lines[0]["route"] != "GET /v1/sandboxes/{id}/ports/{port}/{path...}" || lines[1]["status"] != float64(401) {
		t.Errorf("access lines: %v", lines)
	}
}
