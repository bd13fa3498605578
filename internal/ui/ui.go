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
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/sdk"
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
	// Keys checks the key given at login (the API's own authenticator).
	Keys      auth.Authenticator
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
		history:  NewHistory(cfg.Sandboxes, cfg.Usage, cfg.SampleEvery, cfg.HistoryWindow),
		mux:      http.NewServeMux(),
	}
	u.mux.HandleFunc("GET /ui/{$}", serveIndex)
	u.mux.HandleFunc("GET /ui/assets/{file}", serveAsset)
	u.mux.HandleFunc("POST /ui/login", u.login)
	u.mux.HandleFunc("POST /ui/logout", u.withSession(u.logout))
	// The token's only source: a page of another origin cannot read it.
	u.mux.HandleFunc("GET /ui/session", u.withSessionNoCSRF(u.sessionInfo))
	u.mux.HandleFunc("/ui/api/", u.withSession(u.proxy))
	u.mux.HandleFunc("GET /ui/stats", u.withSession(u.latestStats))
	u.mux.HandleFunc("GET /ui/stats/{id}", u.withSession(u.statsHistory))
	u.mux.HandleFunc("GET /ui/system", u.withSession(u.system))
	u.mux.HandleFunc("/ui/", func(w http.ResponseWriter, r *http.Request) {
		httpjson.WriteError(w, errdefs.NotFound(sdk.CodeRouteNotFound, "no dashboard route %s %s", r.Method, r.URL.Path))
	})
	return u
}

// Run samples the stats history until ctx ends.
func (u *UI) Run(ctx context.Context) { u.history.Run(ctx) }

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

// withSession lets through a request with a live session whose key the API
// still accepts, from this origin, carrying the CSRF token (a WebSocket:
// from this origin only).
func (u *UI) withSession(next sessionHandler) http.HandlerFunc {
	return u.checkSession(next, true)
}

// withSessionNoCSRF is withSession without the CSRF token, for the one
// request that hands it out.
func (u *UI) withSessionNoCSRF(next sessionHandler) http.HandlerFunc {
	return u.checkSession(next, false)
}

func (u *UI) checkSession(next sessionHandler, needCSRF bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess, ok := u.sessions.get(r)
		if !ok {
			httpjson.WriteError(w, errdefs.Unauthorized(sdk.CodeUnauthorized, "not logged in to the dashboard: POST /ui/login with an API key"))
			return
		}
		if !sameOrigin(r) {
			httpjson.WriteError(w, errdefs.Forbidden(sdk.CodeUnauthorized, "a dashboard request must come from the dashboard's own origin"))
			return
		}
		if needCSRF && !isWebSocket(r) && !validCSRF(r, sess) {
			httpjson.WriteError(w, errdefs.Forbidden(sdk.CodeUnauthorized, "a dashboard request must carry the session's %s header (GET /ui/session)", CSRFHeader))
			return
		}
		p, err := u.cfg.Keys.Authenticate(r.Context(), sess.key)
		if err != nil { // revoked or expired since login
			u.sessions.endKey(sess.key)
			clearCookie(w, r)
			httpjson.WriteError(w, errdefs.Unauthorized(sdk.CodeUnauthorized, "the session's API key is no longer valid; log in again"))
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
