package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/wire"
)

const testKey = "test-key"

func newTestServer(t *testing.T) (*Server, *fakeSandboxes) {
	t.Helper()
	f := newFake()
	return New(f, fakeImages{}, auth.AdminToken(testKey)), f
}

// do sends a request to s; key "" sends none.
func do(s *Server, method, path, key, body string) *httptest.ResponseRecorder {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}

// wantError checks an answer in the API's error format.
func wantError(t *testing.T, rec *httptest.ResponseRecorder, status int, code wire.Code) wire.ErrorBody {
	t.Helper()
	var er wire.ErrorResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &er); err != nil {
		t.Fatalf("answer %d %q is not an error body: %v", rec.Code, rec.Body, err)
	}
	if rec.Code != status || er.Error.Code != code || er.Error.Message == "" {
		t.Fatalf("got %d %+v, want %d %s", rec.Code, er.Error, status, code)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("error Content-Type %q", ct)
	}
	return er.Error
}

func TestAuth(t *testing.T) {
	s, _ := newTestServer(t)
	missing := do(s, "GET", "/v1/sandboxes", "", "")
	if e := wantError(t, missing, 401, wire.CodeUnauthorized); !strings.Contains(e.Message, "missing API key") {
		t.Errorf("missing key message %q", e.Message)
	}
	if missing.Header().Get("WWW-Authenticate") == "" {
		t.Error("401 without WWW-Authenticate")
	}
	if e := wantError(t, do(s, "GET", "/v1/sandboxes", "wrong", ""), 401, wire.CodeUnauthorized); e.Message != "wrong API key" {
		t.Errorf("wrong key message %q", e.Message)
	}
	// Not a bearer token at all.
	req := httptest.NewRequest("GET", "/v1/sandboxes", nil)
	req.Header.Set("Authorization", "Basic "+testKey)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	wantError(t, rec, 401, wire.CodeUnauthorized)

	if rec := do(s, "GET", "/v1/sandboxes", testKey, ""); rec.Code != 200 {
		t.Fatalf("right key: %d %s", rec.Code, rec.Body)
	}
	// Public routes need no key; every other route does.
	if rec := do(s, "GET", "/healthz", "", ""); rec.Code != 200 {
		t.Fatalf("healthz without key: %d", rec.Code)
	}
	for _, rt := range s.routes() {
		rec := do(s, rt.method, samplePath(rt.pattern), "", "")
		if rt.public {
			if rec.Code == 401 {
				t.Errorf("public %s %s asks for a key", rt.method, rt.pattern)
			}
			continue
		}
		if rec.Code != 401 {
			t.Errorf("%s %s without key: %d", rt.method, rt.pattern, rec.Code)
		}
	}
}

// Each error kind maps to its status and the JSON error body; an internal
// error shows the client a generic message only.
func TestErrorMapping(t *testing.T) {
	cases := []struct {
		err    error
		status int
		code   wire.Code
	}{
		{errdefs.Invalid(wire.CodeInvalidName, "bad name"), 400, wire.CodeInvalidName},
		{errdefs.Unauthorized(wire.CodeUnauthorized, "no"), 401, wire.CodeUnauthorized},
		{errdefs.NotFound(wire.CodeSandboxNotFound, "no such sandbox"), 404, wire.CodeSandboxNotFound},
		{errdefs.Conflict(wire.CodeSandboxBusy, "busy"), 409, wire.CodeSandboxBusy},
		{errdefs.TooLarge(wire.CodeBodyTooLarge, "big"), 413, wire.CodeBodyTooLarge},
		{errdefs.Unavailable(wire.CodeDaemonStopping, "later"), 503, wire.CodeDaemonStopping},
		{fmt.Errorf("wrapped: %w", errdefs.NotFound(wire.CodeSandboxNotFound, "inner")), 404, wire.CodeSandboxNotFound},
		{errdefs.Internal(errors.New("disk on fire at /var/lib/sbx"), "commit"), 500, wire.CodeInternal},
		{errors.New("a plain error with a secret path /etc/shadow"), 500, wire.CodeInternal},
	}
	for _, c := range cases {
		s, f := newTestServer(t)
		f.err = c.err
		rec := do(s, "GET", "/v1/sandboxes/other", testKey, "")
		e := wantError(t, rec, c.status, c.code)
		// The cause of an internal error stays in the daemon's log.
		if c.status == 500 && (strings.Contains(e.Message, "fire") || strings.Contains(e.Message, "/etc/shadow")) {
			t.Errorf("internal error leaks its cause: %q", e.Message)
		}
		if c.status == 503 && rec.Header().Get("Retry-After") == "" {
			t.Error("503 without Retry-After")
		}
	}
}

func TestStrictJSON(t *testing.T) {
	cases := []struct {
		name, body string
		status     int
		code       wire.Code
	}{
		{"unknown field", `{"image":"x","imagee":"y"}`, 400, wire.CodeUnknownField},
		{"trailing data", `{"image":"x"} {"image":"y"}`, 400, wire.CodeInvalidJSON},
		{"malformed", `{"image":`, 400, wire.CodeInvalidJSON},
		{"wrong type", `{"image":42}`, 400, wire.CodeInvalidJSON},
		{"not an object", `[1,2]`, 400, wire.CodeInvalidJSON},
		{"too big", `{"image":"` + strings.Repeat("x", httpjson.MaxBody) + `"}`, 413, wire.CodeBodyTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, f := newTestServer(t)
			wantError(t, do(s, "POST", "/v1/sandboxes", testKey, c.body), c.status, c.code)
			if len(f.created) != 0 {
				t.Fatal("bad input reached the Manager")
			}
		})
	}
	s, f := newTestServer(t)
	if rec := do(s, "POST", "/v1/sandboxes", testKey, `{"image":"base"}`); rec.Code != 201 || len(f.created) != 1 || f.created[0].Image != "base" {
		t.Fatalf("good input: %d %s", rec.Code, rec.Body)
	}
}

// samplePath fills a route pattern's parameters.
func samplePath(pattern string) string {
	r := strings.NewReplacer("{id}", "sb1", "{name...}", "lib/img:1", "{path...}", "a/b", "{port}", "8080")
	p := r.Replace(pattern)
	return pathParamRe.ReplaceAllString(p, "x")
}

// Every route of the table is served under its own pattern, and every
// handler answers (an error in the API's format at worst, never a panic).
func TestRouting(t *testing.T) {
	s, _ := newTestServer(t)
	for _, rt := range s.routes() {
		req := httptest.NewRequest(rt.method, samplePath(rt.pattern), nil)
		if _, pattern := s.mux.Handler(req); pattern != rt.method+" "+rt.pattern {
			t.Errorf("%s %s is served by %q", rt.method, samplePath(rt.pattern), pattern)
		}
		rec := do(s, rt.method, samplePath(rt.pattern), testKey, "")
		if rec.Code == 500 || rec.Code == 404 && strings.Contains(rec.Body.String(), string(wire.CodeRouteNotFound)) {
			t.Errorf("%s %s: %d %s", rt.method, rt.pattern, rec.Code, rec.Body)
		}
	}
	for _, p := range []string{"/v1/nope", "/v2/sandboxes", "/v1/sandboxes/sb1/nope", "/"} {
		wantError(t, do(s, "GET", p, testKey, ""), 404, wire.CodeRouteNotFound)
	}
	wantError(t, do(s, "PATCH", "/v1/images", testKey, ""), 404, wire.CodeRouteNotFound)

	// Handlers that delegate pass their helper's error on.
	wantError(t, do(s, "GET", "/v1/sandboxes/nope/events", testKey, ""), 404, wire.CodeSandboxNotFound)
	wantError(t, do(s, "GET", "/v1/events?after=x", testKey, ""), 400, wire.CodeInvalidParameter)
}

// The toolbox routes the API forwards are the agent's routes: each one the
// API forwards is in agentapi.Routes, and every agent route but the
// daemon's own (health, shutdown, sync, suspend) is served.
func TestToolboxRoutesAreTheAgentContract(t *testing.T) {
	s, _ := newTestServer(t)
	forwarding := map[uintptr]bool{}
	for _, h := range []any{s.proxy, s.streamProxy, s.exec, s.runCode, s.attachPTY, s.git, s.writeFile, s.readFile} {
		forwarding[reflect.ValueOf(h).Pointer()] = true
	}
	served := map[agentapi.Route]bool{}
	for _, rt := range s.routes() {
		if !forwarding[reflect.ValueOf(rt.handler).Pointer()] {
			continue
		}
		rest, ok := strings.CutPrefix(rt.pattern, "/v1/sandboxes/{id}")
		ar, known := agentapi.Lookup(rt.method, rest)
		if !ok || !known {
			t.Errorf("%s %s forwards to %s, which the agent does not serve", rt.method, rt.pattern, rest)
		}
		served[ar] = true
	}
	daemonOnly := map[agentapi.Route]bool{agentapi.Health: true, agentapi.Shutdown: true, agentapi.Sync: true, agentapi.Suspend: true, agentapi.SetEnv: true, agentapi.ForwardTCP: true, agentapi.ExecAttach: true,
		agentapi.PackDir: true, agentapi.UnpackDir: true, // backups (backups.go)
		agentapi.FileFD: true} // writeFile and readFile (files_fd.go)
	for _, ar := range agentapi.Routes {
		if !served[ar] && !daemonOnly[ar] {
			t.Errorf("agent route %s is not served by the API", ar.Pattern())
		}
	}
}

func TestDocumentListsCodes(t *testing.T) {
	s, _ := newTestServer(t)
	doc := s.Document()
	n := 0
	for path, ops := range doc["paths"].(map[string]map[string]any) {
		for method, op := range ops {
			codes := op.(map[string]any)["x-error-codes"].([]string)
			has := func(c wire.Code) bool {
				for _, x := range codes {
					if x == string(c) {
						return true
					}
				}
				return false
			}
			public := op.(map[string]any)["security"] != nil
			if !has(wire.CodeInternal) || !public && !has(wire.CodeUnauthorized) {
				t.Errorf("%s %s: codes %v", method, path, codes)
			}
			if strings.HasPrefix(path, "/v1/sandboxes/{id}") && !has(wire.CodeSandboxNotFound) {
				t.Errorf("%s %s lacks SANDBOX_NOT_FOUND: %v", method, path, codes)
			}
			n++
		}
	}
	exec := doc["paths"].(map[string]map[string]any)["/v1/sandboxes/{id}/exec"]["post"].(map[string]any)["x-error-codes"].([]string)
	for _, want := range []wire.Code{wire.CodeInvalidJSON, wire.CodeSandboxUnavailable, wire.CodeInstanceLost, wire.CodeStreamLineTooLong, wire.CodeCommandNotFound} {
		if !strings.Contains(strings.Join(exec, ","), string(want)) {
			t.Errorf("exec lacks %s: %v", want, exec)
		}
	}
	if n < 70 {
		t.Fatalf("only %d operations", n)
	}
}
