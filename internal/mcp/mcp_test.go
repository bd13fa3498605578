package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/authz/authztest"
	"github.com/sbxhq/sbx/sdk"
	"github.com/sbxhq/sbx/wire"
)

// fakeAPI answers the API calls the tests make and records their keys.
type fakeAPI struct {
	mu   sync.Mutex
	keys []string
	// exec is the command_run answer, given once slow (if not nil) closes.
	exec wire.ExecResult
	slow chan struct{}
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.keys = append(f.keys, r.Header.Get("Authorization"))
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == "GET" && r.URL.Path == "/v1/sandboxes/box":
		json.NewEncoder(w).Encode(wire.Sandbox{ID: "sbx-1", Name: "box", State: wire.StateStarted})
	case r.Method == "POST" && r.URL.Path == "/v1/sandboxes/box/exec":
		if f.slow != nil {
			<-f.slow
		}
		json.NewEncoder(w).Encode(f.exec)
	case r.Method == "POST" && r.URL.Path == "/v1/sandboxes/box/run":
		json.NewEncoder(w).Encode(wire.RunResult{Stdout: "hi\n", Results: []wire.CodeResult{{PNG: pngBytes}, {HTML: "<table></table>"}, {Main: true, Text: "42"}}})
	case r.Method == "GET" && r.URL.Path == "/v1/sandboxes/box/desktop/screenshot":
		w.Header().Set("Content-Type", "image/png")
		w.Write(pngBytes)
	default:
		w.WriteHeader(404)
		json.NewEncoder(w).Encode(wire.ErrorResponse{Error: wire.ErrorBody{Code: wire.CodeSandboxNotFound, Message: "no sandbox " + r.URL.Path}})
	}
}

// pngBytes stands for a PNG: the tools pass images on as they are.
var pngBytes = []byte("\x89PNG\r\n\x1a\nnot really")

func connect(t *testing.T, c *sdk.Client) *gomcp.ClientSession {
	t.Helper()
	ct, st := gomcp.NewInMemoryTransports()
	srv := New(func(*gomcp.RequestExtra) (*sdk.Client, error) { return c, nil }, Options{})
	if _, err := srv.Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := gomcp.NewClient(&gomcp.Implementation{Name: "test"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *gomcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &gomcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*gomcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// TestToolsListed: every tool has a description and an object schema whose
// properties are described where a model needs it.
func TestToolsListed(t *testing.T) {
	cs := connect(t, sdk.NewClient("http://127.0.0.1:1", "k"))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range res.Tools {
		names[tl.Name] = true
		if tl.Description == "" {
			t.Errorf("%s has no description", tl.Name)
		}
		b, _ := json.Marshal(tl.InputSchema)
		var s struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		json.Unmarshal(b, &s)
		if s.Type != "object" {
			t.Errorf("%s: schema type %q", tl.Name, s.Type)
		}
		if _, ok := s.Properties["sandbox"]; !ok && tl.Name != "sandbox_create" && tl.Name != "sandbox_get_or_create" && tl.Name != "sandbox_list" {
			t.Errorf("%s takes no sandbox: %s", tl.Name, b)
		}
	}
	for _, want := range []string{"sandbox_create", "sandbox_get_or_create", "sandbox_list", "sandbox_get", "sandbox_stop", "sandbox_start",
		"sandbox_delete", "sandbox_pause", "sandbox_resume", "sandbox_fork", "sandbox_snapshot", "command_run", "process_start",
		"process_output", "process_write_stdin", "process_signal", "process_wait", "code_context_create", "code_run", "file_read", "file_write",
		"file_edit", "file_list", "file_search", "file_delete", "file_move", "git_clone", "git_status", "git_diff", "git_commit", "port_expose",
		"desktop_start", "desktop_screenshot", "desktop_click", "desktop_type", "desktop_key", "desktop_scroll"} {
		if !names[want] {
			t.Errorf("no tool %s", want)
		}
	}
}

// TestErrorsCarryCode: a refusal of the daemon is a tool error naming sbx's
// code and status; a bad argument is a tool error before any request.
func TestErrorsCarryCode(t *testing.T) {
	api := &fakeAPI{}
	ts := httptest.NewServer(api)
	defer ts.Close()
	cs := connect(t, sdk.NewClient(ts.URL, "k"))
	out, isErr := call(t, cs, "sandbox_get", map[string]any{"sandbox": "ghost"})
	if !isErr || !strings.Contains(out, "SANDBOX_NOT_FOUND (HTTP 404)") {
		t.Errorf("missing sandbox: error %v, %q", isErr, out)
	}
	out, isErr = call(t, cs, "sandbox_get", map[string]any{"sandbox": 7})
	if !isErr || !strings.Contains(out, "sandbox") {
		t.Errorf("a number for sandbox: error %v, %q", isErr, out)
	}
	n := len(api.keys)
	out, isErr = call(t, cs, "file_edit", map[string]any{"sandbox": "box", "path": "/a", "old": "", "new": "x"})
	if !isErr || !strings.Contains(out, "INVALID_PARAMETER") || len(api.keys) != n {
		t.Errorf("empty old: error %v, %q, %d requests", isErr, out, len(api.keys)-n)
	}
}

// TestOutputBudget: command output over maxBytes is cut at a character
// boundary with a note saying how much was left out.
func TestOutputBudget(t *testing.T) {
	api := &fakeAPI{exec: wire.ExecResult{ExitCode: 3, Stdout: strings.Repeat("é", 100), Stderr: "bad"}}
	ts := httptest.NewServer(api)
	defer ts.Close()
	cs := connect(t, sdk.NewClient(ts.URL, "k"))
	out, isErr := call(t, cs, "command_run", map[string]any{"sandbox": "box", "shell": "x", "maxBytes": 51})
	if isErr {
		t.Fatal(out)
	}
	want := "--- stdout ---\n" + strings.Repeat("é", 25) + "\n[truncated at maxBytes 51: the last 150 bytes of stdout are left out"
	if !strings.Contains(out, want) || !strings.Contains(out, "exit code: 3") || !strings.Contains(out, "--- stderr ---\nbad") {
		t.Errorf("got\n%s\nwant it to hold\n%s", out, want)
	}
}

func TestClip(t *testing.T) {
	kept, note := clip("abcdef", 10, 4)
	if kept != "abcd" || !strings.Contains(note, "2 more bytes; continue with offset 14") {
		t.Errorf("clip: %q %q", kept, note)
	}
	if kept, note := clip("abc", 0, 4); kept != "abc" || note != "" {
		t.Errorf("clip within budget: %q %q", kept, note)
	}
}

// TestHTTPGated: /mcp refuses a request without a key or with a wrong one
// (401) before MCP sees it; a tool call reaches the API handler with the
// caller's key, where the API's own gate decides (internal/api
// TestEveryRouteGated).
func TestHTTPGated(t *testing.T) {
	h := authztest.New(t)
	h.Gate.Limits = nil // many requests of one key; TestHTTPAdmitted checks the limit
	key, _ := h.Key("acme", auth.ScopeSandboxesRead)
	api := &fakeAPI{}
	ts := httptest.NewServer(Handler(h.Gate, api))
	defer ts.Close()
	for _, k := range []string{"", "wrong"} {
		if got := postInitialize(t, ts.URL, k); got != 401 {
			t.Errorf("key %q: %d, want 401", k, got)
		}
	}
	hc := &http.Client{Transport: bearer{key}}
	cs, err := gomcp.NewClient(&gomcp.Implementation{Name: "test"}, nil).Connect(context.Background(), &gomcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	out, isErr := call(t, cs, "sandbox_get", map[string]any{"sandbox": "box"})
	if isErr || !strings.Contains(out, `"id": "sbx-1"`) {
		t.Fatalf("sandbox_get over HTTP: %v %s", isErr, out)
	}
	if got := api.keys[len(api.keys)-1]; got != "Bearer "+key {
		t.Errorf("the API saw %q, want the caller's key", got)
	}

	// Behind a reverse proxy on the same host: a loopback connection that
	// names the public host.
	proxied := &http.Client{Transport: hostRewrite{bearer{key}, "sbx.example.com"}}
	cs, err = gomcp.NewClient(&gomcp.Implementation{Name: "test"}, nil).Connect(context.Background(), &gomcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: proxied}, nil)
	if err != nil {
		t.Fatalf("through a reverse proxy: %v", err)
	}
	defer cs.Close()
	call(t, cs, "sandbox_get", map[string]any{"sandbox": "box"})
}

type hostRewrite struct {
	next http.RoundTripper
	host string
}

func (h hostRewrite) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Host = h.host
	return h.next.RoundTrip(r)
}

type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// TestInProcessAbort: an API handler that aborts (a proxy whose reader went
// away panics with http.ErrAbortHandler) ends that answer only; unrecovered
// in inProcess's goroutine it took the daemon down.
func TestInProcessAbort(t *testing.T) {
	rt := inProcess{http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("partial"))
		panic(http.ErrAbortHandler)
	})}
	req, _ := http.NewRequest("GET", "http://x/v1/y", nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Error("an aborted answer read to its end without an error")
	}
}

// TestImages: a chart of code_run and a screenshot come back as MCP image
// content (PNG), HTML and the value as text blocks of their own.
func TestImages(t *testing.T) {
	ts := httptest.NewServer(&fakeAPI{})
	defer ts.Close()
	cs := connect(t, sdk.NewClient(ts.URL, "k"))
	image := func(name string, args map[string]any, wantBlocks int) *gomcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &gomcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError || len(res.Content) != wantBlocks {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		var img *gomcp.ImageContent
		for _, c := range res.Content {
			if i, ok := c.(*gomcp.ImageContent); ok {
				img = i
			}
		}
		if img == nil || img.MIMEType != "image/png" || string(img.Data) != string(pngBytes) {
			t.Errorf("%s: no PNG image content in %+v", name, res.Content)
		}
		return res
	}
	res := image("code_run", map[string]any{"sandbox": "box", "code": "plot()"}, 4)
	if txt := res.Content[0].(*gomcp.TextContent).Text; !strings.Contains(txt, "--- stdout ---\nhi") {
		t.Errorf("code_run's text: %q", txt)
	}
	if html := res.Content[2].(*gomcp.TextContent).Text; html != "result (text/html):\n<table></table>" {
		t.Errorf("code_run's HTML: %q", html)
	}
	image("desktop_screenshot", map[string]any{"sandbox": "box"}, 1)
}

// TestUnknownArgumentRefused: an argument no tool takes is refused, not
// dropped (a model's typo must not pass as a default).
func TestUnknownArgumentRefused(t *testing.T) {
	api := &fakeAPI{}
	ts := httptest.NewServer(api)
	defer ts.Close()
	cs := connect(t, sdk.NewClient(ts.URL, "k"))
	for name, args := range map[string]map[string]any{
		"sandbox_get":    {"sandbox": "box", "sandbx": "other"},
		"command_run":    {"sandbox": "box", "shell": "true", "timeout": 5},
		"sandbox_create": {"name": "x", "memory": 512},
	} {
		out, isErr := call(t, cs, name, args)
		if !isErr || !strings.Contains(out, "additional") && !strings.Contains(out, "unknown") {
			t.Errorf("%s %v: error %v %q", name, args, isErr, out)
		}
	}
	if len(api.keys) != 0 {
		t.Errorf("refused calls reached the API: %d requests", len(api.keys))
	}
}

// /mcp itself goes through the gate: no key 401, a key without the read
// scope 403, a key past its rate limit 429.
func TestHTTPAdmitted(t *testing.T) {
	h := authztest.New(t)
	ts := httptest.NewServer(Handler(h.Gate, &fakeAPI{}))
	defer ts.Close()
	h.Check(t, authztest.Op{Name: "POST /mcp", Need: authz.Read, Method: "POST", Path: "/mcp",
		Do: func(key string, _ auth.Principal) int { return postInitialize(t, ts.URL, key) }}, nil)
}

// postInitialize sends an MCP initialize request to url with key as the
// bearer token ("" none) and returns the answer's status.
func postInitialize(t *testing.T, url, key string) int {
	t.Helper()
	r, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A call that carries a progress token hears its tool is still working
// while the work lasts, and nothing after it ends.
func TestProgressWhileWorking(t *testing.T) {
	defer func(d time.Duration) { progressEvery = d }(progressEvery)
	progressEvery = 10 * time.Millisecond
	api := &fakeAPI{exec: wire.ExecResult{Stdout: "done"}, slow: make(chan struct{})}
	ts := httptest.NewServer(api)
	defer ts.Close()
	notes := make(chan *gomcp.ProgressNotificationParams, 100)
	ct, st := gomcp.NewInMemoryTransports()
	srv := New(func(*gomcp.RequestExtra) (*sdk.Client, error) { return sdk.NewClient(ts.URL, "k"), nil }, Options{})
	if _, err := srv.Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := gomcp.NewClient(&gomcp.Implementation{Name: "test"}, &gomcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *gomcp.ProgressNotificationClientRequest) {
			select {
			case notes <- req.Params:
			default:
			}
		}}).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	result := make(chan error, 1)
	go func() {
		params := &gomcp.CallToolParams{Name: "command_run", Arguments: map[string]any{"sandbox": "box", "shell": "sleep 60"}}
		params.SetProgressToken("tok-1")
		res, err := cs.CallTool(context.Background(), params)
		if err == nil && res.IsError {
			err = fmt.Errorf("tool error: %+v", res.Content[0])
		}
		result <- err
	}()
	var last float64
	for range 2 {
		var n *gomcp.ProgressNotificationParams
		select {
		case n = <-notes:
		case err := <-result:
			t.Fatalf("the call ended before any progress: %v", err)
		}
		if n.ProgressToken != "tok-1" || n.Progress <= last || !strings.Contains(n.Message, "command_run") {
			t.Fatalf("progress %+v after %v", n, last)
		}
		last = n.Progress
	}
	close(api.slow)
	if err := <-result; err != nil {
		t.Fatal(err)
	}
}
