package agentapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// fakeAgent serves h on the agent socket of a new run directory, as code
// in a sandbox that replaced the agent could.
func fakeAgent(t *testing.T, h http.HandlerFunc) *Client {
	t.Helper()
	dir := newRunDir(t)
	l, err := net.Listen("unix", filepath.Join(dir, AgentSock))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, MaxHeaderBytes: 64 << 20}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	c := NewClient(dir)
	t.Cleanup(c.Close)
	return c
}

// allocated runs fn and returns the bytes it allocated (all goroutines).
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A fake agent answering with 64 MiB of headers: the client gives up at
// MaxHeaderBytes with a clear error instead of reading them whole.
func TestClientBoundsHeaders(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	c := fakeAgent(t, func(w http.ResponseWriter, r *http.Request) {
		for i := range 64 {
			w.Header().Set("X-Bloat-"+string(rune('a'+i%26))+strings.Repeat("z", i), huge)
		}
		w.WriteHeader(http.StatusOK)
	})
	var err error
	n := allocated(func() { err = c.Health(t.Context()) })
	if errdefs.CodeOf(err) != wire.CodeAgentResponseTooLarge || !strings.Contains(err.Error(), "headers") {
		t.Fatalf("Health against huge headers: %v", err)
	}
	if n > 16<<20 {
		t.Errorf("reading a 64 MiB header allocated %d MiB", n>>20)
	}
	// Forward (the API's streams) has the same limit.
	_, err = c.Forward(t.Context(), Request{Method: "GET", Path: Watch.Path})
	if errdefs.CodeOf(err) != wire.CodeAgentResponseTooLarge {
		t.Fatalf("Forward against huge headers: %v", err)
	}
}

// A fake agent answering a JSON call with 64 MiB: the client stops after
// MaxAnswer and says so (it used to cut the body silently at 1 MiB).
func TestClientBoundsAnswers(t *testing.T) {
	c := fakeAgent(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		chunk := bytes.Repeat([]byte("y"), 1<<20)
		for range 64 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	var err error
	n := allocated(func() { err = c.Health(t.Context()) })
	if errdefs.CodeOf(err) != wire.CodeAgentResponseTooLarge || !errdefs.Is(err, errdefs.KindUnavailable) {
		t.Fatalf("Health against a huge body: %v", err)
	}
	if n > 16<<20 {
		t.Errorf("reading a 64 MiB answer allocated %d MiB", n>>20)
	}
}

// A fake agent that never answers: every call ends with its context.
func TestClientHonoursDeadline(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	c := fakeAgent(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	calls := map[string]func(context.Context) error{
		"Health":   c.Health,
		"Sync":     c.Sync,
		"Suspend":  c.Suspend,
		"Shutdown": func(ctx context.Context) error { return c.Shutdown(ctx, time.Second) },
	}
	for name, call := range calls {
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		done := make(chan error, 1)
		go func() { done <- call(ctx) }()
		select {
		case err := <-done:
			if !errors.Is(err, context.DeadlineExceeded) || !errdefs.Is(err, errdefs.KindUnavailable) {
				t.Errorf("%s against a silent agent: %v", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s did not return after its deadline", name)
		}
		cancel()
	}
}

// An error answer of the agent comes back as the errdefs error it was.
func TestClientErrorAnswer(t *testing.T) {
	c := fakeAgent(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		io.WriteString(w, `{"error":{"code":"CHECKPOINT_REFUSED","message":"a socket is open"}}`)
	})
	err := c.Sync(t.Context())
	if errdefs.CodeOf(err) != wire.CodeCheckpointRefused || !errdefs.Is(err, errdefs.KindConflict) || err.Error() != "a socket is open" {
		t.Fatalf("Sync: %v", err)
	}
}

// Every round trip to an agent is observed under its route's pattern.
func TestObserveCallNamesTheRoute(t *testing.T) {
	var got []string
	ObserveCall = func(route string, _ time.Duration, _ error) { got = append(got, route) }
	defer func() { ObserveCall = nil }()
	ok := roundTripFunc(func(*http.Request) (*http.Response, error) { return &http.Response{StatusCode: 200}, nil })
	observed{ok}.RoundTrip(httptest.NewRequest("GET", "http://agent/processes/p-123/logs?follow=true", nil))
	observed{ok}.RoundTrip(httptest.NewRequest("GET", "http://agent/no/such/route", nil))
	// WaitReady's polls fail by design until the agent listens: not sampled.
	observed{ok}.RoundTrip(httptest.NewRequestWithContext(withoutObserving(context.Background()), "GET", "http://agent/healthz", nil))
	if len(got) != 2 || got[0] != "GET /processes/{process}/logs" || got[1] != "other" {
		t.Errorf("observed %q", got)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// An agent connection the daemon no longer uses is closed after
// idleConnTimeout: a host of idle sandboxes holds no connection (two
// goroutines and their buffers on each side) to each one it touched.
func TestClientDropsIdleConnections(t *testing.T) {
	saved := idleConnTimeout
	idleConnTimeout = 50 * time.Millisecond
	t.Cleanup(func() { idleConnTimeout = saved })
	dir := newRunDir(t)
	l, err := net.Listen("unix", filepath.Join(dir, AgentSock))
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{}, 1)
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{}`)) }),
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateClosed {
				closed <- struct{}{}
			}
		},
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	c := NewClient(dir)
	if err := c.Health(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("the client still holds its idle connection to the agent")
	}
}
