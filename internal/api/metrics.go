package api

import (
	"crypto/subtle"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Metrics is what the API reports to and serves at /metrics
// (internal/metrics.Metrics).
type Metrics interface {
	ObserveRequest(method, route string, code int, took time.Duration)
	Handler() http.Handler                // everything: the operator's
	TeamHandler(team string) http.Handler // one team's series only
}

// Usage reads what a sandbox uses now (internal/metrics.Sampler). It only
// reads: it never starts an instance.
type Usage interface {
	Stats(sb *store.Sandbox) wire.SandboxStats
}

// MetricsConfig turns on /metrics, request metrics and sandbox stats.
type MetricsConfig struct {
	Metrics Metrics
	Usage   Usage
	// Token, when set, is a read-only key that /metrics accepts besides the
	// admin key. It opens nothing else.
	Token string
}

type metricsState struct{ metrics *MetricsConfig }

// SetMetrics turns on metrics; call it before serving.
func (s *Server) SetMetrics(c MetricsConfig) { s.metrics = &c }

// measured counts the requests of one route, labelled with its pattern
// (never the raw path, so the series stay few) and status code.
func (s *Server) measured(rt route, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.metrics == nil || s.metrics.Metrics == nil {
			next(w, r)
			return
		}
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			code := sw.code
			if code == 0 {
				code = http.StatusOK
			}
			s.metrics.Metrics.ObserveRequest(rt.method, rt.pattern, code, time.Since(start))
		}()
		next(sw, r)
	}
}

// statusWriter remembers the status code. Flush, Hijack and the like reach
// the real writer through Unwrap (http.ResponseController).
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// ReadFrom: see statusRecorder.ReadFrom.
func (w *statusWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return io.Copy(w.ResponseWriter, r)
}

func (w *statusWriter) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// serveMetrics serves /metrics through the gate to a key holding
// metrics:read (or admin): a team's key sees its team's series only; the
// bootstrap admin key and the metrics key (--metrics-token, the operator's)
// see everything.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) error {
	if s.metrics == nil || s.metrics.Metrics == nil {
		return errdefs.Unavailable(wire.CodeMetricsUnavailable, "this daemon serves no metrics")
	}
	if key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && s.metrics.Token != "" && keyIs(key, s.metrics.Token) {
		s.metrics.Metrics.Handler().ServeHTTP(w, r)
		return nil
	}
	p, err := s.principal(r)
	if err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="sbx"`)
		return errdefs.Unauthorized(wire.CodeUnauthorized, "/metrics needs a key with scope metrics:read or the metrics key (--metrics-token): send \"Authorization: Bearer <key>\"")
	}
	w, r, end, err := s.gate.HTTP(w, r, p, authz.Metrics)
	defer end()
	if err != nil {
		return err
	}
	if p.AllTeams() {
		s.metrics.Metrics.Handler().ServeHTTP(w, r)
	} else {
		s.metrics.Metrics.TeamHandler(p.Team).ServeHTTP(w, r)
	}
	return nil
}

func keyIs(key, want string) bool { return subtle.ConstantTimeCompare([]byte(key), []byte(want)) == 1 }

// sandboxStats answers what a sandbox uses now. It only looks: a stopped
// sandbox reads as zeros with its state, and it is no activity (passive).
func (s *Server) sandboxStats(w http.ResponseWriter, r *http.Request) error {
	sb, err := s.sandboxes.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	st := wire.SandboxStats{ID: sb.ID, Name: sb.Name, State: sb.State, Time: time.Now().UTC(), DiskLimitBytes: uint64(sb.Spec.DiskMiB) << 20}
	if s.metrics != nil && s.metrics.Usage != nil {
		st = s.metrics.Usage.Stats(sb)
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}
