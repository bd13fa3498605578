// Package api serves the sbx HTTP API: routing, authentication, JSON
// decoding, error mapping and the OpenAPI document. It holds no state of its
// own; every change goes through the sandbox Manager.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Sandboxes is what the API needs of the sandbox Manager; each part is
// defined next to the handlers that use it.
type Sandboxes interface {
	sandboxLifecycle                                                                             // sandboxes.go
	sandboxPolicy                                                                                // lifecycle.go
	sandboxSnapshots                                                                             // snapshots.go
	agents                                                                                       // toolbox.go
	imageUsers                                                                                   // images.go
	SetEgress(ctx context.Context, idOrName string, p wire.EgressPolicy) (*store.Sandbox, error) // ports.go
	EnsureServing(ctx context.Context, idOrName string, port int) (*store.Sandbox, error)        // ports.go
}

// Server is the HTTP API.
type Server struct {
	sandboxes Sandboxes
	images    Images
	auth      auth.Authenticator
	gate      *authz.Gate // every route goes through it (auth.go)
	refusals  refusalLog  // thins the access lines of 429s (accesslog_refusals.go)
	mux       *http.ServeMux
	net       *Networking // networks and previews; nil without (see ports.go)
	builds    Builds      // image builds; nil without (build.go)

	metricsState // /metrics, request metrics, stats (metrics.go)

	createOnTouch bool // touch.go

	tenancy      *Tenancy                                        // keys, teams, rate limits, audit (auth.go)
	ssh          *sshState                                       // sshaccess.go; nil without the SSH gateway
	storage      *Storage                                        // volumes and backups; nil without (volumes.go)
	egressHTTP   *EgressHTTP                                     // secrets, egress log (secret.go); nil without
	pools        Pools                                           // warm pools; nil without (pool.go)
	hostHandlers []func(http.ResponseWriter, *http.Request) bool // MountHost
	rules        map[string]instanceRule                         // by mux pattern (lookup.go)
}

// New returns the API over the given managers. Every /v1 request must carry
// "Authorization: Bearer <key>" with a key that keys accepts.
func New(sandboxes Sandboxes, images Images, keys auth.Authenticator) *Server {
	s := &Server{sandboxes: sandboxes, images: images, auth: keys, gate: &authz.Gate{Keys: keys, RequestID: RequestID}, mux: http.NewServeMux()}
	s.rules = map[string]instanceRule{}
	for _, rt := range s.routes() {
		// lookup.go: a lookup route never starts the sandbox.
		s.rules[rt.method+" "+rt.pattern] = ruleOf(rt)
		h := adapt(s.withInstanceRule(rt))
		if countsAsActivity(rt) { // lifecycle.go
			h = s.active(h)
		}
		if !rt.public {
			h = s.authenticate(rt, h) // auth.go: key, scope, rate limit, audit
		}
		h = s.measured(rt, h) // metrics.go
		s.mux.Handle(rt.method+" "+rt.pattern, h)
	}
	s.mountPprof() // pprof.go
	// Unknown routes answer in the API's error format.
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, errdefs.NotFound(wire.CodeRouteNotFound, "no route %s %s; see GET /v1/openapi.json", r.Method, r.URL.Path))
	})
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w, r, logged := s.logRequest(w, r) // accesslog.go: request id and access line
	defer logged()
	defer func() {
		// A panic is a bug; answer 500 instead of dropping the connection.
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			slog.Error("panic serving a request", "method", r.Method, "route", r.Pattern, "requestId", RequestID(r.Context()), "panic", p, "stack", string(debug.Stack()))
			writeError(w, r, errdefs.Internal(nil, "panic: %v", p))
		}
	}()
	for _, h := range s.hostHandlers { // MountHost: compat layers' host names first
		if h(w, r) {
			return
		}
	}
	if s.servePreviewHost(w, r) { // http://{port}-{sandbox}.{preview-domain}/
		return
	}
	s.mux.ServeHTTP(w, r)
}

// principal is who r's "Authorization: Bearer" key stands for.
func (s *Server) principal(r *http.Request) (auth.Principal, error) {
	if p, ok, err := s.gate.Forwarded(r); ok { // the cluster gateway's (internal/authz/forwarded.go)
		return p, err
	}
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return auth.Principal{}, errdefs.Unauthorized(wire.CodeUnauthorized, "missing API key: send \"Authorization: Bearer <key>\"; the admin key is in <data-dir>/admin.token")
	}
	return s.auth.Authenticate(r.Context(), key)
}

// Mount serves h under prefix (a pattern such as "/daytona/"), behind the
// API's access log and panic recovery: compatibility layers and other
// surfaces sit beside the API on the same listener. h authenticates itself.
func (s *Server) Mount(prefix string, h http.Handler) { s.mux.Handle(prefix, h) }

// MountHost lets h answer a request by its host name before the previews
// and the API do (E2B's {port}-{sandbox}.{domain}); h reports whether it
// answered. Like Mount, behind the access log and panic recovery.
func (s *Server) MountHost(h func(http.ResponseWriter, *http.Request) bool) {
	s.hostHandlers = append(s.hostHandlers, h)
}

// handler is an API handler: it writes its answer, or returns the error to
// answer with (writeError). Once it has written, it returns nil.
type handler = func(w http.ResponseWriter, r *http.Request) error

// adapt turns a route's handler into an http.HandlerFunc.
func adapt(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			writeError(w, r, err)
		}
	}
}
