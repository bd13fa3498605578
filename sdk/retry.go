package sdk

import (
	"errors"
	"net/http"
	"strconv"
	"time"
)

// RetryPolicy says how a Client retries an idempotent call (GET, HEAD, PUT,
// DELETE, OPTIONS without a streamed body) that the daemon answered with 429
// (rate limited) or 503 (unavailable, e.g. a sandbox still starting). It
// waits as long as the answer's Retry-After says, else 0.5 s doubling. A
// WAIT_TIMEOUT (the call has waited already) is never retried.
type RetryPolicy struct {
	// MaxRetries is how many times a call is tried again after the first
	// attempt; 0 turns retries off.
	MaxRetries int
	// MaxWait caps one wait: a Retry-After longer than it ends the retries
	// with the daemon's error rather than waiting less than asked.
	MaxWait time.Duration
}

// DefaultRetry is the policy of a Client without WithRetry.
var DefaultRetry = RetryPolicy{MaxRetries: 3, MaxWait: 30 * time.Second}

// WithRetry sets the client's retry policy; WithRetry(RetryPolicy{}) turns
// retries off.
func WithRetry(p RetryPolicy) Option {
	return func(c *Client) { c.retry = p }
}

// next says whether a call that ended in err after attempt retries (0 the
// first) goes again, and after how long.
func (p RetryPolicy) next(req request, err error, attempt int) (time.Duration, bool) {
	var e *APIError
	if attempt >= p.MaxRetries || !errors.As(err, &e) || req.body != nil ||
		(e.StatusCode != http.StatusTooManyRequests && e.StatusCode != http.StatusServiceUnavailable) ||
		e.Code == CodeWaitTimeout {
		return 0, false
	}
	switch req.method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodOptions:
	default:
		return 0, false
	}
	wait := e.RetryAfter
	if wait == 0 {
		wait = min(500*time.Millisecond<<attempt, p.MaxWait)
	}
	return wait, wait <= p.MaxWait
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}
