package api

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/sbxhq/sbx/wire"
)

// Every request gets a request id: the caller's X-Request-Id when it is
// well formed, else a new one. It is sent back in X-Request-Id on every
// answer and named in the request's log lines, so an operator can find the
// lines of the request a user reports.
//
// One access-log line is written per request when it ends (for a stream or
// a WebSocket, when it closes, so its duration is the stream's). The line
// names the route pattern, never the raw path or query: a preview URL's
// query holds tokens and signatures, and no header is logged at all.

// RequestIDHeader is the header that carries a request's id both ways.
const RequestIDHeader = wire.RequestIDHeader

// maxRequestID bounds an accepted incoming request id.
const maxRequestID = 128

type requestIDKey struct{}

// RequestID returns the id of the request ctx belongs to, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// requestID is the incoming id when it is safe to log and echo (bounded,
// letters, digits and -_.:), else a new random one.
func requestID(incoming string) string {
	if validRequestID(incoming) {
		return incoming
	}
	b := make([]byte, 12)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func validRequestID(s string) bool {
	if s == "" || len(s) > maxRequestID {
		return false
	}
	for _, c := range []byte(s) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':'
		if !ok {
			return false
		}
	}
	return true
}

// logRequest starts the access log of one request: it sets its id on the
// answer and in its context and returns the writer and request to serve
// with, and the function that writes the access line once it is served.
func (s *Server) logRequest(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request, func()) {
	start := time.Now()
	id := requestID(r.Header.Get(RequestIDHeader))
	w.Header().Set(RequestIDHeader, id)
	r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
	rec := &statusRecorder{ResponseWriter: w}
	return rec, r, func() {
		// ServeMux set r.Pattern on this request when it routed it; a
		// host-based preview never reaches the mux.
		route := r.Pattern
		if route == "" {
			route = "preview-host"
		}
		attrs := []slog.Attr{
			slog.String("method", r.Method),
			slog.String("route", route),
			slog.Int("status", rec.statusCode()),
			slog.Duration("duration", time.Since(start)),
			slog.Int64("bytes", rec.bytes),
			slog.String("requestId", id),
			slog.String("client", r.RemoteAddr),
		}
		if sb := r.PathValue("id"); sb != "" {
			attrs = append(attrs, slog.String("sandbox", sb))
		}
		if rec.statusCode() == http.StatusTooManyRequests {
			log, unlogged := s.refusals.take(time.Now()) // accesslog_refusals.go
			if !log {
				return
			}
			attrs = append(attrs, slog.Int("unlogged429", unlogged))
		}
		level := slog.LevelInfo
		if route == "GET /healthz" && rec.statusCode() == http.StatusOK {
			level = slog.LevelDebug // probes every few seconds would drown the rest
		}
		slog.LogAttrs(r.Context(), level, "request", attrs...)
	}
}

// statusRecorder notes the status and body size of an answer. It passes
// Flush and Hijack through (streams and WebSockets need them) and unwraps
// for http.ResponseController.
type statusRecorder struct {
	http.ResponseWriter
	status   int
	bytes    int64
	hijacked bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

// ReadFrom keeps the real writer's ReadFrom (sendfile for a download,
// files_fd.go) reachable through the wrapper.
func (s *statusRecorder) ReadFrom(r io.Reader) (int64, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := io.Copy(s.ResponseWriter, r)
	s.bytes += n
	return n, err
}

func (s *statusRecorder) Flush() {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	http.NewResponseController(s.ResponseWriter).Flush()
}

func (s *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(s.ResponseWriter).Hijack()
	if err == nil {
		s.hijacked = true
	}
	return c, rw, err
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// statusCode is the answer's status: 101 for a hijacked connection (a
// WebSocket; the proxy wrote its 101 on the raw connection), 200 when the
// handler wrote nothing.
func (s *statusRecorder) statusCode() int {
	switch {
	case s.status != 0:
		return s.status
	case s.hijacked:
		return http.StatusSwitchingProtocols
	default:
		return http.StatusOK
	}
}
