// Package daytona serves Daytona's API so that Daytona's official SDKs work,
// unchanged, against sbx: the user points apiUrl (DAYTONA_API_URL) at
// {sbx}/daytona/api and uses an sbx API key. It is a translation layer: every
// operation goes to the sandbox Manager or, for the toolbox, to the
// sandbox's agent through the agent contract (internal/agentapi). The wire
// contract comes from the SDK's public, Apache-2.0 generated clients.
//
// Surfaces, all under Prefix:
//
//	/daytona/api/sandbox…          control plane (control.go)
//	/daytona/api/socket.io/        state events over socket.io (socketio.go)
//	/daytona/toolbox/{id}/…        the toolbox the SDK reaches via toolboxProxyUrl (toolbox.go, files.go, sessions.go, pty.go)
//	/daytona/preview/{id}/{port}/… previews with X-Daytona-Preview-Token (preview.go)
package daytona

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/internal/sshgw"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Prefix is where the compat layer is mounted (api.Server.Mount).
const Prefix = "/daytona/"

const (
	apiPrefix     = "/daytona/api"
	toolboxPrefix = "/daytona/toolbox"
	previewPrefix = "/daytona/preview"
)

// Sandboxes is what the layer needs of the sandbox Manager: the same
// methods the sbx API calls, so there is one implementation of each.
type Sandboxes interface {
	Create(ctx context.Context, req wire.CreateSandboxRequest) (*store.Sandbox, error)
	List(ctx context.Context, f store.Filter) ([]*store.Sandbox, error)
	Get(ctx context.Context, idOrName string) (*store.Sandbox, error)
	Delete(ctx context.Context, idOrName string, wait bool) (*store.Sandbox, error)
	// EnsureRunning starts, resumes or restores a sandbox as its state needs.
	EnsureRunning(ctx context.Context, idOrName string) (*store.Sandbox, error)
	Stop(ctx context.Context, idOrName string, opt sandbox.StopOptions) (*store.Sandbox, error)
	Archive(ctx context.Context, idOrName string) (*store.Sandbox, error)
	Pause(ctx context.Context, idOrName string) (*store.Sandbox, error)
	Update(ctx context.Context, idOrName string, req wire.UpdateSandboxRequest) (*store.Sandbox, error)
	Fork(ctx context.Context, idOrName string, req wire.ForkRequest) (*sandbox.ForkResult, error)
	CreateSnapshot(ctx context.Context, idOrName string, req wire.CreateSnapshotRequest) (*store.Snapshot, error)
	Touch(ctx context.Context, idOrName string) // counts as activity
	GetSnapshot(ctx context.Context, name string) (*store.Snapshot, error)
	ListSnapshots(ctx context.Context) ([]*store.Snapshot, error)
	// Agent reaches a sandbox's agent, starting the sandbox if it is stopped.
	Agent(ctx context.Context, idOrName string) (*agentapi.Client, *store.Sandbox, error)
	// MainExit is how the main process (the entrypoint) ended, if it did.
	MainExit(sb *store.Sandbox) (agentapi.MainExit, bool)
	// Events and EventsChanged feed the socket.io state events.
	Events(ctx context.Context, idOrName string, after int64, limit int) ([]store.Event, error)
	EventsChanged() <-chan struct{}
}

// Images are sbx's images: a Dockerfile's "FROM <image>", Daytona's snapshots.
type Images interface {
	Get(ctx context.Context, name string) (*store.Image, error)
	List(ctx context.Context) ([]*store.Image, error)
}

// Previews is the preview proxy's port registry (network.Previews).
type Previews interface {
	// Link returns the exposed port, exposing it private if it is not.
	Link(ctx context.Context, id string, port int) (*store.Port, error)
	// Expose exposes a port, public or not (a conflict if it already is the other way).
	Expose(ctx context.Context, id string, port int, public bool) (*store.Port, error)
	Sign(rec *store.Port, expires time.Time) string
	// Get returns an exposed port; NotFound if it is not exposed.
	Get(ctx context.Context, id string, port int) (*store.Port, error)
}

// Config is what New needs.
type Config struct {
	Sandboxes Sandboxes
	Images    Images
	Gate      *authz.Gate // every request's way in
	// Previews and API serve preview links: a request to
	// /daytona/preview/{id}/{port}/… is handed to API as sbx's own preview
	// route. Both nil: preview links answer 503.
	Previews Previews
	API      http.Handler
	// SSH is the SSH gateway's access records (api.Server.SSHAccess), nil
	// or answering nil when the daemon runs without the gateway.
	SSH func() *sshgw.Access
	// Metrics is the dashboard's stats history, for getMetrics (metrics.go);
	// nil: getMetrics answers no samples.
	Metrics MetricsHistory
	// Keys and SigningSecret make and check signed file URLs
	// (signedurls.go); either unset: they answer 503.
	Keys          auth.KeyLookup
	SigningSecret []byte
	// Toolbox, when set, takes every toolbox request (/daytona/toolbox/{id}/…)
	// once the gate admits it, instead of this layer serving it: the
	// cluster gateway forwards it to the host that runs the sandbox, whose
	// own Daytona layer serves it.
	Toolbox func(w http.ResponseWriter, r *http.Request, id string) error
}

// Handler serves the Daytona API.
type Handler struct {
	cfg Config
	mux *http.ServeMux
}

// New returns the Daytona compat handler; mount it at Prefix.
func New(cfg Config) *Handler {
	h := &Handler{cfg: cfg, mux: http.NewServeMux()}
	for _, rt := range h.routes() {
		if cfg.Toolbox != nil && strings.Contains(rt.pattern, " "+toolboxPrefix+"/") {
			rt.fn = func(w http.ResponseWriter, r *http.Request) error { return cfg.Toolbox(w, r, r.PathValue("id")) }
		}
		fn := rt.fn
		if !rt.public {
			fn = h.authenticate(rt.need, fn)
		}
		if rt.signed {
			fn = h.signedOr(rt.need, strings.Fields(rt.pattern)[0], rt.fn, fn)
		}
		h.mux.Handle(rt.pattern, fn)
	}
	for _, u := range unsupportedRoutes { // unsupported.go: authenticated, so they say nothing to strangers
		h.mux.Handle(u.pattern, h.authenticate(authz.Read, unsupportedMethod(u.method, u.why)))
	}
	h.mux.HandleFunc(Prefix, func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, errdefs.NotFound(wire.CodeRouteNotFound, "the Daytona compatibility layer of sbx does not serve %s %s", r.Method, r.URL.Path))
	})
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

type route struct {
	pattern string
	fn      handlerFunc
	public  bool     // authenticates itself (socket.io) or is a preview
	need    authz.Op // scope and audit (routes.go)
	signed  bool     // also served to a signed URL without a key (signedurls.go)
}

// handlerFunc writes its answer or returns the error to answer with.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

func (f handlerFunc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := f(w, r); err != nil {
		writeError(w, r, err)
	}
}

// authenticate lets a request through the gate as need: "Authorization:
// Bearer <sbx key>" (or, through the cluster gateway, the caller's
// principal the gateway forwards), the scope, the key's rate limit, the
// audit log; the principal goes into the context, so the Manager scopes by
// its team.
func (h *Handler) authenticate(need authz.Op, next handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if p, ok, err := h.cfg.Gate.Forwarded(r); ok { // through the cluster gateway
			if err != nil {
				return err
			}
			return h.serveAs(w, r, p, need, next)
		}
		key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			return errdefs.Unauthorized(wire.CodeUnauthorized, "missing API key: set apiKey (DAYTONA_API_KEY) to an sbx API key")
		}
		p, err := h.cfg.Gate.Key(r.Context(), key)
		if err != nil {
			return err
		}
		return h.serveAs(w, r, p, need, next)
	}
}

// serveAs serves r as principal p through the gate as need.
func (h *Handler) serveAs(w http.ResponseWriter, r *http.Request, p auth.Principal, need authz.Op, next handlerFunc) error {
	w, r, end, err := h.cfg.Gate.HTTP(w, r, p, need)
	defer end()
	if err == nil {
		err = next(w, r)
	}
	if err != nil {
		writeError(w, r, err) // through the gate's writer: the audit sees the answer
	}
	return nil
}

// baseURL is the scheme and host the client reached sbx by.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func logErr(msg string, args ...any) { slog.Warn("daytona compat: "+msg, args...) }
