package sdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// APIError is an error response from the daemon.
type APIError struct {
	StatusCode int    // HTTP status; 0 for an error event inside a stream
	Code       Code   // stable code such as CodeSandboxNotFound
	Message    string // what went wrong, for a person
	// RequestID is the daemon's id of the request (its X-Request-Id
	// header), which its log and audit entries carry: quote it when
	// reporting a problem. "" for an error event inside a stream.
	RequestID string
	// RetryAfter is how long the daemon asked to wait before trying again
	// (its Retry-After header, on 429 and 503); 0 when it did not say.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s (%s)", e.Message, e.Code)
}

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// decodeError turns a non-2xx response into an *APIError. A body that is not
// the API's JSON error (a proxy's HTML page, a plain-text panic) still gives a
// readable error: its first line becomes the message.
func decodeError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &APIError{StatusCode: resp.StatusCode, RequestID: resp.Header.Get(RequestIDHeader), RetryAfter: retryAfter(resp.Header.Get("Retry-After"))}
	var er ErrorResponse
	if json.Unmarshal(b, &er) == nil && er.Error.Code != "" {
		e.Code, e.Message = er.Error.Code, er.Error.Message
		return e
	}
	e.Code = Code(fmt.Sprintf("HTTP_%d", resp.StatusCode))
	msg := strings.TrimSpace(string(b))
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = strings.TrimSpace(msg[:i])
	}
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	e.Message = fmt.Sprintf("daemon answered %s: %s", resp.Status, msg)
	return e
}

func hasStatus(err error, status int) bool {
	var e *APIError
	return errors.As(err, &e) && e.StatusCode == status
}

// IsNotFound reports whether err is an API error for a thing that does not exist.
func IsNotFound(err error) bool { return hasStatus(err, http.StatusNotFound) }

// IsConflict reports whether err is an API error for a clash with existing
// state: the name is taken, the sandbox is in the wrong state, the image is in use.
func IsConflict(err error) bool { return hasStatus(err, http.StatusConflict) }

// IsUnavailable reports whether err is an API error that may pass on retry.
func IsUnavailable(err error) bool { return hasStatus(err, http.StatusServiceUnavailable) }

// IsUnauthorized reports whether err is an API error for a missing or wrong token.
func IsUnauthorized(err error) bool { return hasStatus(err, http.StatusUnauthorized) }

// IsInvalid reports whether err is an API error for bad input.
func IsInvalid(err error) bool { return hasStatus(err, http.StatusBadRequest) }
