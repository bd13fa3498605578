package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const testToken = "secret-token"

// newTestServer serves mux behind a bearer-token check like the daemon's.
func newTestServer(t *testing.T, mux *http.ServeMux) *Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			writeErr(w, http.StatusUnauthorized, "UNAUTHORIZED", "missing or wrong API key")
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return NewClient(srv.URL, testToken)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, status int, code Code, msg string) {
	writeJSON(w, status, ErrorResponse{Error: ErrorBody{Code: code, Message: msg}})
}

func TestCreateSandboxEncodesRequest(t *testing.T) {
	mux := http.NewServeMux()
	var got CreateSandboxRequest
	mux.HandleFunc("POST /v1/sandboxes", func(w http.ResponseWriter, r *http.Request) {
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type = %q", ct)
		}
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Errorf("decode body: %v", err)
		}
		writeJSON(w, http.StatusCreated, Sandbox{ID: "sbx-1", Name: got.Name, State: StateStarted, Image: got.Image})
	})
	c := newTestServer(t, mux)
	req := CreateSandboxRequest{Name: "box", Image: "alpine", Env: map[string]string{"A": "1"}, CPU: 1.5, MemoryMiB: 256}
	sb, err := c.CreateSandbox(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, req) {
		t.Errorf("server got %+v, want %+v", got, req)
	}
	if sb.ID != "sbx-1" || sb.Name != "box" || sb.State != StateStarted {
		t.Errorf("sandbox = %+v", sb)
	}
}

func TestEnsureSandboxReportsCreated(t *testing.T) {
	mux := http.NewServeMux()
	exists := map[string]bool{}
	mux.HandleFunc("PUT /v1/sandboxes/{name}", func(w http.ResponseWriter, r *http.Request) {
		var req CreateSandboxRequest
		json.NewDecoder(r.Body).Decode(&req)
		name := r.PathValue("name")
		if req.Name != name {
			t.Errorf("body name %q, path name %q", req.Name, name)
		}
		status := http.StatusOK
		if !exists[name] {
			exists[name] = true
			status = http.StatusCreated
		}
		writeJSON(w, status, Sandbox{ID: "sbx-2", Name: name})
	})
	c := newTestServer(t, mux)
	for i, wantCreated := range []bool{true, false} {
		sb, created, err := c.EnsureSandbox(context.Background(), "my box", CreateSandboxRequest{Name: "ignored"})
		if err != nil {
			t.Fatal(err)
		}
		if created != wantCreated || sb.Name != "my box" {
			t.Errorf("call %d: created=%v sandbox=%+v, want created=%v", i, created, sb, wantCreated)
		}
	}
}

func TestListSandboxesQuery(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/sandboxes", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("state") != "started" {
			t.Errorf("state = %q", q.Get("state"))
		}
		if got, want := q["label"], []string{"env=prod", "team=a=b"}; !reflect.DeepEqual(got, want) {
			t.Errorf("labels = %q, want %q", got, want)
		}
		writeJSON(w, http.StatusOK, []Sandbox{{ID: "sbx-1"}, {ID: "sbx-2"}})
	})
	c := newTestServer(t, mux)
	list, err := c.ListSandboxes(context.Background(), ListOptions{State: "started", Labels: map[string]string{"team": "a=b", "env": "prod"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[1].ID != "sbx-2" {
		t.Errorf("list = %+v", list)
	}
}

func TestStopAndDeleteQuery(t *testing.T) {
	mux := http.NewServeMux()
	var stopQuery, deleteQuery string
	mux.HandleFunc("POST /v1/sandboxes/{id}/stop", func(w http.ResponseWriter, r *http.Request) {
		stopQuery = r.URL.RawQuery
		writeJSON(w, http.StatusOK, Sandbox{ID: r.PathValue("id"), State: StateStopped})
	})
	mux.HandleFunc("DELETE /v1/sandboxes/{id}", func(w http.ResponseWriter, r *http.Request) {
		deleteQuery = r.URL.RawQuery
		w.WriteHeader(http.StatusNoContent)
	})
	c := newTestServer(t, mux)
	grace := 0
	sb, err := c.StopSandbox(context.Background(), "box", StopOptions{GraceSeconds: &grace, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if sb.State != StateStopped || stopQuery != "force=true&graceSeconds=0" {
		t.Errorf("state %q, query %q", sb.State, stopQuery)
	}
	if _, err := c.StopSandbox(context.Background(), "box", StopOptions{}); err != nil || stopQuery != "" {
		t.Errorf("default stop: err %v, query %q", err, stopQuery)
	}
	if err := c.Sandbox("box").Delete(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	if deleteQuery != "wait=true" {
		t.Errorf("delete query %q", deleteQuery)
	}
}

func TestErrorDecoding(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/sandboxes/{id}", func(w http.ResponseWriter, r *http.Request) {
		switch r.PathValue("id") {
		case "missing":
			writeErr(w, http.StatusNotFound, "SANDBOX_NOT_FOUND", `sandbox "missing" not found`)
		case "busy":
			writeErr(w, http.StatusConflict, "SANDBOX_BUSY", "busy")
		case "proxy":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, "<html>bad gateway</html>\nmore")
		case "empty":
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	c := newTestServer(t, mux)
	ctx := context.Background()

	_, err := c.GetSandbox(ctx, "missing")
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Code != "SANDBOX_NOT_FOUND" {
		t.Fatalf("err = %#v", err)
	}
	if !IsNotFound(err) || IsConflict(err) {
		t.Errorf("IsNotFound/IsConflict wrong for %v", err)
	}
	if got := err.Error(); got != `sandbox "missing" not found (SANDBOX_NOT_FOUND)` {
		t.Errorf("Error() = %q", got)
	}
	if _, err := c.GetSandbox(ctx, "busy"); !IsConflict(err) {
		t.Errorf("busy: %v", err)
	}

	_, err = c.GetSandbox(ctx, "proxy")
	if !errors.As(err, &apiErr) || apiErr.Code != "HTTP_502" || !strings.Contains(apiErr.Message, "<html>bad gateway</html>") || strings.Contains(apiErr.Message, "more") {
		t.Errorf("non-JSON error = %#v", err)
	}
	_, err = c.GetSandbox(ctx, "empty")
	if !IsUnavailable(err) || !strings.Contains(err.Error(), "Service Unavailable") {
		t.Errorf("empty error body = %v", err)
	}

	bad := NewClient(c.Host(), "wrong")
	if _, err := bad.ListImages(ctx); !IsUnauthorized(err) {
		t.Errorf("wrong token: %v", err)
	}
	if _, err := c.GetSandbox(ctx, ""); err == nil || IsNotFound(err) {
		t.Errorf("empty name: %v", err)
	}
	if IsInvalid(errors.New("plain")) {
		t.Error("IsInvalid on a plain error")
	}
}

func TestUnreachableDaemon(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	_, err := NewClient(url, "t").ListSandboxes(context.Background(), ListOptions{})
	if err == nil || !strings.Contains(err.Error(), "cannot reach sbx daemon at "+url) {
		t.Errorf("err = %v", err)
	}
}

// ndjsonHandler streams events, flushing after each one.
func ndjsonHandler(t *testing.T, events []ExecEvent) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("stream") != "true" {
			t.Errorf("stream query missing: %q", r.URL.RawQuery)
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		enc := json.NewEncoder(w)
		for _, ev := range events {
			enc.Encode(ev)
		}
	}
}

func TestExecStreamDecodesEvents(t *testing.T) {
	mux := http.NewServeMux()
	var got ExecRequest
	mux.HandleFunc("POST /v1/sandboxes/{id}/exec", func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&got)
		ndjsonHandler(t, []ExecEvent{
			{Type: "start", Pid: 7},
			{Type: "stdout", Seq: 1, Data: []byte("hello ")},
			{Type: "heartbeat"},
			{Type: "stderr", Seq: 2, Data: []byte("oops\n")},
			{Type: "stdout", Seq: 3, Data: []byte("world\n")},
			{Type: "some-future-event"},
			{Type: "exit", ExitCode: 3, DurationMs: 12},
		})(w, r)
	})
	c := newTestServer(t, mux)
	var stdout, stderr bytes.Buffer
	req := ExecRequest{Cmd: []string{"sh", "-c", "exit 3"}, Cwd: "/tmp", TimeoutSeconds: 5}
	res, err := c.ExecStream(context.Background(), "box", req, &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, req) {
		t.Errorf("request %+v, want %+v", got, req)
	}
	if res.ExitCode != 3 || res.DurationMs != 12 || res.Signal != "" {
		t.Errorf("result = %+v", res)
	}
	if stdout.String() != "hello world\n" || stderr.String() != "oops\n" {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}

func TestExecStreamWithoutExitIsAnError(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/sandboxes/{id}/exec", ndjsonHandler(t, []ExecEvent{
		{Type: "start", Pid: 7},
		{Type: "stdout", Data: []byte("partial")},
	}))
	c := newTestServer(t, mux)
	var stdout bytes.Buffer
	res, err := c.ExecStream(context.Background(), "box", ExecRequest{Cmd: []string{"x"}}, &stdout, nil)
	if !errors.Is(err, ErrStreamEnded) || res != nil {
		t.Fatalf("res %+v, err %v; want ErrStreamEnded", res, err)
	}
	if stdout.String() != "partial" {
		t.Errorf("stdout %q", stdout.String())
	}
}

func TestExecStreamTruncatedLine(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/sandboxes/{id}/exec", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"type":"start"}`+"\n"+`{"type":"exit","exitCo`)
	})
	c := newTestServer(t, mux)
	if _, err := c.ExecStream(context.Background(), "box", ExecRequest{}, nil, nil); !errors.Is(err, ErrStreamEnded) {
		t.Fatalf("err = %v, want ErrStreamEnded", err)
	}
}

func TestExecStreamErrorEvent(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/sandboxes/{id}/exec", ndjsonHandler(t, []ExecEvent{
		{Type: "start"},
		{Type: "error", Error: &ErrorBody{Code: "AGENT_GONE", Message: "the agent went away"}},
		{Type: "exit", ExitCode: 0}, // must not be reached
	}))
	c := newTestServer(t, mux)
	res, err := c.ExecStream(context.Background(), "box", ExecRequest{}, nil, nil)
	var apiErr *APIError
	if res != nil || !errors.As(err, &apiErr) || apiErr.Code != "AGENT_GONE" {
		t.Fatalf("res %+v, err %v", res, err)
	}
}

// notifyWriter signals on its first write.
type notifyWriter struct {
	bytes.Buffer
	first chan struct{}
}

func (w *notifyWriter) Write(p []byte) (int, error) {
	if w.Len() == 0 {
		close(w.first)
	}
	return w.Buffer.Write(p)
}

func TestExecStreamDeliversOutputBeforeExit(t *testing.T) {
	out := &notifyWriter{first: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/sandboxes/{id}/exec", func(w http.ResponseWriter, r *http.Request) {
		enc := json.NewEncoder(w)
		enc.Encode(ExecEvent{Type: "stdout", Data: []byte("early")})
		w.(http.Flusher).Flush()
		// The exit event is held back until the client has written the
		// early output, so a client that buffered the stream would hang.
		<-out.first
		enc.Encode(ExecEvent{Type: "exit", Signal: "SIGKILL", TimedOut: true})
	})
	c := newTestServer(t, mux)
	res, err := c.ExecStream(context.Background(), "box", ExecRequest{}, out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != "early" || res.Signal != "SIGKILL" || !res.TimedOut {
		t.Errorf("out %q, res %+v", out.String(), res)
	}
}

func TestExecNonStreaming(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/sandboxes/{id}/exec", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("stream") {
			t.Error("stream query on a plain exec")
		}
		var req ExecRequest
		json.NewDecoder(r.Body).Decode(&req)
		writeJSON(w, http.StatusOK, ExecResult{ExitCode: 0, Stdout: req.Stdin})
	})
	c := newTestServer(t, mux)
	res, err := c.Sandbox("box").Exec(context.Background(), ExecRequest{Cmd: []string{"cat"}, Stdin: "in"})
	if err != nil || res.Stdout != "in" {
		t.Fatalf("res %+v, err %v", res, err)
	}
}

func TestUploadStreams(t *testing.T) {
	firstChunk := make(chan struct{})
	var query string
	var body bytes.Buffer
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /v1/sandboxes/{id}/files", func(w http.ResponseWriter, r *http.Request) {
		query = r.URL.RawQuery
		buf := make([]byte, 5)
		if _, err := io.ReadFull(r.Body, buf); err != nil {
			t.Errorf("read first chunk: %v", err)
		}
		body.Write(buf)
		close(firstChunk)
		io.Copy(&body, r.Body)
		writeJSON(w, http.StatusOK, FileInfo{Path: r.URL.Query().Get("path"), Size: int64(body.Len()), Mode: "0755"})
	})
	c := newTestServer(t, mux)

	// The rest of the body is written only after the server has read the
	// first chunk, so a client that buffered the whole body would hang.
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte("first"))
		<-firstChunk
		pw.Write([]byte(" second"))
		pw.Close()
	}()
	fi, err := c.Upload(context.Background(), "box", "/work space/a.sh", pr, 0o755|os.ModeSetuid, WithParents())
	if err != nil {
		t.Fatal(err)
	}
	if body.String() != "first second" || fi.Size != 12 || fi.Path != "/work space/a.sh" {
		t.Errorf("body %q, info %+v", body.String(), fi)
	}
	if query != "mode=0755&parents=true&path=%2Fwork+space%2Fa.sh" {
		t.Errorf("query %q", query)
	}
}

func TestDownloadAndFileCalls(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/sandboxes/{id}/files", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("path") == "/nope" {
			writeErr(w, http.StatusNotFound, "FILE_NOT_FOUND", "no such file")
			return
		}
		io.WriteString(w, "contents of "+r.URL.Query().Get("path"))
	})
	mux.HandleFunc("GET /v1/sandboxes/{id}/files/list", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, []FileInfo{{Name: "a", Type: "file"}, {Name: "d", Type: "dir"}})
	})
	mux.HandleFunc("GET /v1/sandboxes/{id}/files/stat", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, FileInfo{Path: r.URL.Query().Get("path"), Type: "dir"})
	})
	mux.HandleFunc("POST /v1/sandboxes/{id}/files/mkdir", func(w http.ResponseWriter, r *http.Request) {
		var req MkdirRequest
		json.NewDecoder(r.Body).Decode(&req)
		if !req.Parents {
			t.Error("parents not sent")
		}
		writeJSON(w, http.StatusOK, FileInfo{Path: req.Path, Type: "dir"})
	})
	mux.HandleFunc("POST /v1/sandboxes/{id}/files/move", func(w http.ResponseWriter, r *http.Request) {
		var req MoveRequest
		json.NewDecoder(r.Body).Decode(&req)
		writeJSON(w, http.StatusOK, FileInfo{Path: req.To})
	})
	var removeQuery string
	mux.HandleFunc("DELETE /v1/sandboxes/{id}/files", func(w http.ResponseWriter, r *http.Request) {
		removeQuery = r.URL.RawQuery
		w.WriteHeader(http.StatusNoContent)
	})
	c := newTestServer(t, mux)
	ctx := context.Background()
	h := c.Sandbox("box")

	rc, err := h.Download(ctx, "/etc/hostname")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "contents of /etc/hostname" {
		t.Errorf("download = %q", b)
	}
	if _, err := h.Download(ctx, "/nope"); !IsNotFound(err) {
		t.Errorf("download missing: %v", err)
	}
	if list, err := h.ListFiles(ctx, "/"); err != nil || len(list) != 2 || list[1].Type != "dir" {
		t.Errorf("list %+v, err %v", list, err)
	}
	if fi, err := h.StatFile(ctx, "/tmp"); err != nil || fi.Path != "/tmp" {
		t.Errorf("stat %+v, err %v", fi, err)
	}
	if fi, err := h.Mkdir(ctx, MkdirRequest{Path: "/a/b", Parents: true}); err != nil || fi.Path != "/a/b" {
		t.Errorf("mkdir %+v, err %v", fi, err)
	}
	if fi, err := h.Move(ctx, MoveRequest{From: "/a", To: "/c"}); err != nil || fi.Path != "/c" {
		t.Errorf("move %+v, err %v", fi, err)
	}
	if err := h.RemoveFile(ctx, "/c", true); err != nil || removeQuery != "path=%2Fc&recursive=true" {
		t.Errorf("remove: err %v, query %q", err, removeQuery)
	}
	if _, err := h.StatFile(ctx, ""); err == nil {
		t.Error("empty path accepted")
	}
}

func TestImages(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/images/{name...}", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, Image{Name: r.PathValue("name")})
	})
	mux.HandleFunc("DELETE /v1/images/{name...}", func(w http.ResponseWriter, r *http.Request) {
		writeErr(w, http.StatusConflict, "IMAGE_IN_USE", "image is used by sandbox box")
	})
	mux.HandleFunc("POST /v1/images/import", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		writeJSON(w, http.StatusCreated, Image{Name: r.URL.Query().Get("name"), SizeBytes: int64(len(b))})
	})
	mux.HandleFunc("POST /v1/images/pull", func(w http.ResponseWriter, r *http.Request) {
		var req PullRequest
		json.NewDecoder(r.Body).Decode(&req)
		writeJSON(w, http.StatusCreated, Image{Name: req.Name, Source: "pull:" + req.Ref})
	})
	c := newTestServer(t, mux)
	ctx := context.Background()

	if img, err := c.GetImage(ctx, "docker.io/library/alpine:3.20"); err != nil || img.Name != "docker.io/library/alpine:3.20" {
		t.Errorf("get %+v, err %v", img, err)
	}
	if err := c.RemoveImage(ctx, "alpine"); !IsConflict(err) {
		t.Errorf("remove: %v", err)
	}
	if img, err := c.ImportImage(ctx, "mine", strings.NewReader("tarbytes")); err != nil || img.Name != "mine" || img.SizeBytes != 8 {
		t.Errorf("import %+v, err %v", img, err)
	}
	if img, err := c.PullImage(ctx, "alpine:3", "a3"); err != nil || img.Name != "a3" || img.Source != "pull:alpine:3" {
		t.Errorf("pull %+v, err %v", img, err)
	}
}

func TestFromEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SBX_DATA_DIR", dir)
	t.Setenv("SBX_HOST", "")
	t.Setenv("SBX_TOKEN", "")

	_, err := FromEnv()
	if err == nil || !strings.Contains(err.Error(), "SBX_TOKEN") || !strings.Contains(err.Error(), filepath.Join(dir, "admin.token")) {
		t.Fatalf("no token: err = %v", err)
	}

	os.WriteFile(filepath.Join(dir, "admin.token"), []byte("from-file\n"), 0o600)
	c, err := FromEnv()
	if err != nil || c.token != "from-file" || c.Host() != DefaultHost {
		t.Fatalf("file token: %+v, %v", c, err)
	}

	t.Setenv("SBX_TOKEN", "from-env")
	t.Setenv("SBX_HOST", "10.0.0.1:9000/")
	c, err = FromEnv()
	if err != nil || c.token != "from-env" || c.Host() != "http://10.0.0.1:9000" {
		t.Fatalf("env token: %+v, %v", c, err)
	}
}
