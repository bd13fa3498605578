package sdk

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestRetryAndRequestID: idempotent calls answered 429/503 are tried again
// (waiting Retry-After, or a backoff within MaxWait), at most MaxRetries
// times; others are not; the error names the daemon's request id.
func TestRetryAndRequestID(t *testing.T) {
	calls := map[string]int{}
	answers := map[string]func(w http.ResponseWriter, n int){
		// 429 twice without Retry-After, then the list.
		"GET /v1/sandboxes": func(w http.ResponseWriter, n int) {
			if n <= 2 {
				writeErr(w, http.StatusTooManyRequests, CodeRateLimited, "slow down")
				return
			}
			writeJSON(w, http.StatusOK, []Sandbox{{ID: "sbx-1"}})
		},
		// Retry-After: 1 honoured.
		"GET /v1/sandboxes/late": func(w http.ResponseWriter, n int) {
			if n == 1 {
				w.Header().Set("Retry-After", "1")
				writeErr(w, http.StatusServiceUnavailable, CodeSandboxUnavailable, "starting")
				return
			}
			writeJSON(w, http.StatusOK, Sandbox{ID: "sbx-2"})
		},
		// Longer than MaxWait: no retry.
		"GET /v1/sandboxes/far": func(w http.ResponseWriter, n int) {
			w.Header().Set("Retry-After", "60")
			writeErr(w, http.StatusServiceUnavailable, CodeSandboxUnavailable, "later")
		},
		// Always 503: gives up after MaxRetries.
		"DELETE /v1/sandboxes/down": func(w http.ResponseWriter, n int) {
			writeErr(w, http.StatusServiceUnavailable, CodeSandboxUnavailable, "down")
		},
		// Not idempotent: once.
		"POST /v1/sandboxes/down/start": func(w http.ResponseWriter, n int) {
			writeErr(w, http.StatusServiceUnavailable, CodeSandboxUnavailable, "down")
		},
		// A wait that ran out already waited: once.
		"GET /v1/sandboxes/waited": func(w http.ResponseWriter, n int) {
			writeErr(w, http.StatusServiceUnavailable, CodeWaitTimeout, "not yet")
		},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Method + " " + r.URL.Path
		calls[key]++
		w.Header().Set(RequestIDHeader, "req-42")
		if a, ok := answers[key]; ok {
			a(w, calls[key])
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	c := NewClient(srv.URL, "tok", WithRetry(RetryPolicy{MaxRetries: 3, MaxWait: 2 * time.Second}))
	ctx := context.Background()

	if list, err := c.ListSandboxes(ctx, ListOptions{}); err != nil || len(list) != 1 || calls["GET /v1/sandboxes"] != 3 {
		t.Errorf("ListSandboxes after two 429s: %v, %v, %d calls", list, err, calls["GET /v1/sandboxes"])
	}
	began := time.Now()
	if sb, err := c.GetSandbox(ctx, "late"); err != nil || sb.ID != "sbx-2" || time.Since(began) < time.Second {
		t.Errorf("GetSandbox after Retry-After 1: %v, %v after %v", sb, err, time.Since(began))
	}
	var e *APIError
	if _, err := c.GetSandbox(ctx, "far"); !errors.As(err, &e) || e.RetryAfter != time.Minute || e.RequestID != "req-42" || calls["GET /v1/sandboxes/far"] != 1 {
		t.Errorf("Retry-After 60 over MaxWait 2s: %#v, %d calls", err, calls["GET /v1/sandboxes/far"])
	}
	if err := c.DeleteSandbox(ctx, "down", false); !IsUnavailable(err) || calls["DELETE /v1/sandboxes/down"] != 4 {
		t.Errorf("DeleteSandbox always 503: %v, %d calls", err, calls["DELETE /v1/sandboxes/down"])
	}
	if _, err := c.StartSandbox(ctx, "down"); !IsUnavailable(err) || calls["POST /v1/sandboxes/down/start"] != 1 {
		t.Errorf("POST retried: %v, %d calls", err, calls["POST /v1/sandboxes/down/start"])
	}
	if _, err := c.GetSandbox(ctx, "waited"); !IsWaitTimeout(err) || calls["GET /v1/sandboxes/waited"] != 1 {
		t.Errorf("WAIT_TIMEOUT retried: %v, %d calls", err, calls["GET /v1/sandboxes/waited"])
	}
	// Off: one call.
	calls = map[string]int{}
	off := NewClient(srv.URL, "tok", WithRetry(RetryPolicy{}))
	if _, err := off.ListSandboxes(ctx, ListOptions{}); err == nil || calls["GET /v1/sandboxes"] != 1 {
		t.Errorf("retries off: %v, %d calls", err, calls["GET /v1/sandboxes"])
	}
}
