// Package ui serves the web dashboard at /ui: a login page that trades an
// API key for a session cookie, the embedded front end (built from web/ by
// scripts/build-ui.sh), and the few things the API has no route for (stats
// history, system status).
//
// The dashboard is a thin client of the API: its data calls go to
// /ui/api/v1/..., which this package hands to the API server itself with the
// session's key, so every rule of the API (scopes, tenancy, rate limits,
// audit, error codes) applies unchanged and no operation is implemented twice.
//
// Security model:
//   - The key is sent once, in the body of POST /ui/login, and kept in the
//     daemon's memory; the browser gets a random session id in an HttpOnly,
//     SameSite=Strict cookie (Secure over TLS). Nothing logs it and it never
//     appears in a URL.
//   - Every data request carries the session's CSRF token in X-Sbx-Csrf; a
//     WebSocket (which cannot carry a header) must come from this origin.
//   - Sessions end on logout, after SessionIdle unused, after SessionMaxAge,
//     or at once when the API refuses the key (revoked).
package ui

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Prefix is where the dashboard is mounted.
const Prefix = "/ui/"

// Sandboxes is what the stats history needs of the sandbox Manager.
type Sandboxes interface {
	Get(ctx context.Context, idOrName string) (*store.Sandbox, error)
	List(ctx context.Context, f store.Filter) ([]*store.Sandbox, error)
}

// Config configures the dashboard.
type Config struct {
	// API serves /v1 (the api.Server): the dashboard's data calls go there.
	API http.Handler
	// Gate checks the key given at login and every session request
	// (the daemon's one gate, internal/authz).
	Gate      *authz.Gate
	Sandboxes Sandboxes
	// System is what the System page reads of the daemon; nil: only
	// version, doctor and memory.
	System *SystemConfig
	// Usage reads a sandbox's CPU time and memory now (default
	// runtime.ReadCgroupStats).
	Usage UsageReader

	SessionIdle   time.Duration // default 2 h
	SessionMaxAge time.Duration // default 24 h
	MaxSessions   int           // default 10000
	SampleEvery   time.Duration // stats history resolution; default 10 s
	HistoryWindow time.Duration // stats history length; default 1 h
	// History, when set, is a stats history the caller runs (shared with
	// Daytona's getMetrics); SampleEvery and HistoryWindow are then its own.
	History *History
}

// UI is the dashboard's handler.
type UI struct {
	cfg      Config
	sessions *sessions
	history  *History
	doctor   doctorCache
	mux      *http.ServeMux
}

// New returns the dashboard. Start its stats sampler with Run.
func New(cfg Config) *UI {
	if cfg.SessionIdle <= 0 {
		cfg.SessionIdle = 2 * time.Hour
	}
	if cfg.SessionMaxAge <= 0 {
		cfg.SessionMaxAge = 24 * time.Hour
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = 10000
	}
	u := &UI{
		cfg:      cfg,
		sessions: newSessions(cfg.SessionIdle, cfg.SessionMaxAge, cfg.MaxSessions),
		history:  cfg.History,
		mux:      http.NewServeMux(),
	}
	if u.history == nil {
		u.history = NewHistory(cfg.Sandboxes, cfg.Usage, cfg.SampleEvery, cfg.HistoryWindow)
	}
	u.mux.HandleFunc("GET /ui/{$}", serveIndex)
	u.mux.HandleFunc("GET /ui/assets/{file}", serveAsset)
	u.mux.HandleFunc("POST /ui/login", u.login)
	for _, rt := range u.sessionRoutes() {
		u.mux.HandleFunc(rt.pattern, u.checkSession(rt, rt.csrf))
	}
	u.mux.HandleFunc("/ui/", func(w http.ResponseWriter, r *http.Request) {
		httpjson.WriteError(w, errdefs.NotFound(wire.CodeRouteNotFound, "no dashboard route %s %s", r.Method, r.URL.Path))
	})
	return u
}

// Run samples the stats history until ctx ends; a history given in
// Config.History is its caller's to run.
func (u *UI) Run(ctx context.Context) {
	if u.cfg.History == nil {
		u.history.Run(ctx)
	}
}

func (u *UI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// The dashboard loads only its own files; no page may frame it.
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' blob: data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	u.mux.ServeHTTP(w, r)
}

// sessionHandler serves a request of a logged-in browser.
type sessionHandler func(w http.ResponseWriter, r *http.Request, sess *session, p auth.Principal)

// sessionRoute is a route of a logged-in browser and what it needs
// (internal/authz); need nil: the API's gate decides per call (the proxy).
type sessionRoute struct {
	pattern string
	need    *authz.Op
	csrf    bool // the request must carry the session's CSRF token
	fn      sessionHandler
}

// loginOp is what logging in needs: any key that can look at sandboxes;
// a session is made, so it is audited.
var loginOp = authz.Op{Scope: auth.ScopeSandboxesRead, Write: true}

func (u *UI) sessionRoutes() []sessionRoute {
	read, admin := authz.Read, authz.Op{Scope: auth.ScopeAdmin}
	return []sessionRoute{
		{"POST /ui/logout", &read, true, u.logout},
		// The token's only source: a page of another origin cannot read it.
		{"GET /ui/session", &read, false, u.sessionInfo},
		{"/ui/api/", nil, true, u.proxy},
		{"GET /ui/stats", &read, true, u.latestStats},
		{"GET /ui/stats/{id}", &read, true, u.statsHistory},
		{"GET /ui/system", &admin, true, u.system},
	}
}

// checkSession lets through a request with a live session whose key the
// gate still accepts for rt, from this origin, carrying the CSRF token
// when needCSRF (a WebSocket: from this origin only).
func (u *UI) checkSession(rt sessionRoute, needCSRF bool) http.HandlerFunc {
	next := rt.fn
	return func(w http.ResponseWriter, r *http.Request) {
		sess, ok := u.sessions.get(r)
		if !ok {
			httpjson.WriteError(w, errdefs.Unauthorized(wire.CodeUnauthorized, "not logged in to the dashboard: POST /ui/login with an API key"))
			return
		}
		if !sameOrigin(r) {
			httpjson.WriteError(w, errdefs.Forbidden(wire.CodeUnauthorized, "a dashboard request must come from the dashboard's own origin"))
			return
		}
		if needCSRF && !isWebSocket(r) && !validCSRF(r, sess) {
			httpjson.WriteError(w, errdefs.Forbidden(wire.CodeUnauthorized, "a dashboard request must carry the session's %s header (GET /ui/session)", CSRFHeader))
			return
		}
		p, err := u.cfg.Gate.Key(r.Context(), sess.key)
		if err != nil { // revoked or expired since login
			u.sessions.endKey(sess.key)
			clearCookie(w, r)
			httpjson.WriteError(w, errdefs.Unauthorized(wire.CodeUnauthorized, "the session's API key is no longer valid; log in again"))
			return
		}
		if rt.need == nil {
			next(w, r, sess, p)
			return
		}
		w, r, end, err := u.cfg.Gate.HTTP(w, r, p, *rt.need)
		defer end()
		if err != nil {
			httpjson.WriteError(w, err)
			return
		}
		next(w, r, sess, p)
	}
}

// sameOrigin reports whether r comes from the dashboard's origin. Browsers
// send Origin on every WebSocket handshake and on every POST, PUT, PATCH
// and DELETE; a request without one (a GET) must then carry the CSRF token.
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return !isWebSocket(r)
	}
	o, err := url.Parse(origin)
	return err == nil && (o.Scheme == "http" || o.Scheme == "https") && strings.EqualFold(o.Host, r.Host)
}

func isWebSocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}
