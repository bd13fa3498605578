// Package gateway serves sbx's own /v1 API for a whole Kubernetes cluster
// of sbx hosts (`sbx gateway`). It is stateless: any number of replicas run
// side by side, each with watch caches of the namespace's agent-sandbox
// Sandbox objects, Pods and Nodes (Cluster).
//
// Lifecycle calls (create, list, get, stop, start, pause, resume, delete)
// become Sandbox objects: create makes one (operatingMode Running) and
// waits until its pod runs and answers, as a create on one host waits for
// the sandbox to start; stop and pause (pause.go) set operatingMode
// Suspended (agent-sandbox deletes the pod, the host archives the sandbox
// to S3); start and resume set Running again (kube-scheduler places the
// pod, maybe on another host, which restores the archive); delete deletes
// the object. get and list merge each object with the live view of the
// host running it.
//
// Every other route under /v1/sandboxes/{id} is reverse-proxied to that
// host (pod.spec.nodeName -> the node's sbx.dev/api annotation) with the
// hosts' admin key: exec and its NDJSON streams, files, processes,
// terminals over WebSockets, previews. Which routes exist, and what each
// does on a sandbox that does not run, comes from internal/api's route
// table: a route that starts the instance on one host starts the sandbox
// here too (lazy start: set Running, wait until ready), a lookup answers []
// or 404 NOT_IN_CURRENT_INSTANCE, a read of files or servers answers 409
// SANDBOX_NOT_RUNNING. Errors have the codes and JSON shape of one host.
package gateway

import (
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/api"
	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/wire"
)

// Config is what a gateway needs.
type Config struct {
	Cluster *Cluster
	// Gate says who may call the gateway (the admin token) and admits each
	// route as the API's table says (internal/authz).
	Gate *authz.Gate
	// Quota is a team's quota, counted over the cluster (Tenants.Quota);
	// nil: none.
	Quota func(team string) wire.Quotas
	// HostToken is the hosts' admin key (a secret the cluster shares): the
	// gateway calls the hosts with it, on behalf of the caller it checked,
	// unless ForwardIdentity.
	HostToken string
	// ForwardIdentity sends the hosts each caller's own principal instead
	// of HostToken (identity.go): the hosts must take it from the gateway's
	// client certificate (Transport's mutual TLS).
	ForwardIdentity bool
	// Transport reaches the hosts; nil: http.DefaultTransport.
	Transport http.RoundTripper
	// ReadyTimeout bounds how long create, start and a lazy start wait for
	// the sandbox's pod to run and answer; 0: 5 minutes.
	ReadyTimeout time.Duration
	// E2BTemplates and TokenSecret are the E2B layer's (e2b.Config; the
	// secret signs the envd access tokens, shared by the replicas).
	E2BTemplates map[string]string
	TokenSecret  []byte
}

// Server is the gateway's HTTP handler.
type Server struct {
	cfg     Config
	cluster *Cluster
	mux     *http.ServeMux
	hosts   *http.Client // the hosts' API, for the merged views
}

// handler writes its answer or returns the error to answer with.
type handler = func(w http.ResponseWriter, r *http.Request) error

// New returns the gateway over cfg.Cluster (started by the caller).
func New(cfg Config) *Server {
	if cfg.Transport == nil {
		cfg.Transport = http.DefaultTransport
	}
	if cfg.ReadyTimeout == 0 {
		cfg.ReadyTimeout = 5 * time.Minute
	}
	s := &Server{cfg: cfg, cluster: cfg.Cluster, mux: http.NewServeMux(),
		hosts: &http.Client{Transport: cfg.Transport, Timeout: 30 * time.Second}}
	own := map[string]handler{
		"getHealth":          s.health,
		"getOpenAPIDocument": s.openapi,
		"createSandbox":      s.create,
		"ensureSandbox":      s.ensure,
		"listSandboxes":      s.list,
		"getSandbox":         s.get,
		"stopSandbox":        s.stop,
		"startSandbox":       s.start,
		"deleteSandbox":      s.delete,
		"updateSandbox":      s.update,
		"pauseSandbox":       s.pause, // pause.go
		"forkSandbox":        s.notInCluster("fork makes sandboxes on the host outside the cluster's desired state"),
		"archiveSandbox":     s.archive, // pause.go
	}
	for _, rt := range api.Routes() {
		h, ok := own[rt.Name]
		switch {
		case ok:
		case rt.Name == "resumeSandbox":
			h = s.resume(s.proxyRoute(rt))
		case strings.HasPrefix(rt.Pattern, "/v1/sandboxes/{id}"):
			h = s.proxyRoute(rt)
		case strings.HasPrefix(rt.Pattern, "/v1/keys"), strings.HasPrefix(rt.Pattern, "/v1/teams"), strings.HasPrefix(rt.Pattern, "/v1/audit"):
			h = s.notInCluster("the gateway's keys, teams and quotas are its keys file (Secret sbx-gateway-keys, sbx gateway key create) and its audit log is JSON lines in its log; see docs/kubernetes/teams.md")
		default:
			h = s.notInCluster("it is served by each sbx host for its own objects")
		}
		hf := adapt(h)
		if !rt.Public {
			hf = s.authenticate(rt, hf)
		}
		s.mux.Handle(rt.Method+" "+rt.Pattern, hf)
	}
	s.mountCompat() // compat.go
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		httpjson.WriteError(w, errdefs.NotFound(wire.CodeRouteNotFound, "no route %s %s; see GET /v1/openapi.json", r.Method, r.URL.Path))
	})
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		// A panic is a bug; answer 500 instead of dropping the connection.
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			slog.Error("panic serving a gateway request", "method", r.Method, "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
			httpjson.WriteError(w, errdefs.Internal(nil, "panic: %v", p))
		}
	}()
	s.mux.ServeHTTP(w, r)
}

func adapt(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			if httpjson.WriteError(w, err) == errdefs.KindInternal {
				slog.Error("gateway request failed", "method", r.Method, "route", r.Pattern, "err", err)
			}
		}
	}
}

// authenticate admits a request through the gate as the API's route
// table says, with the key's principal in its context (team scoping reads
// it from there).
func (s *Server) authenticate(rt api.RouteInfo, next http.HandlerFunc) http.HandlerFunc {
	need := authz.Op{Scope: rt.Scope, Write: rt.Method != http.MethodGet && rt.Method != http.MethodHead && rt.Scope != auth.ScopeSandboxesRead}
	return func(w http.ResponseWriter, r *http.Request) {
		p, err := s.principal(r)
		if err != nil {
			httpjson.WriteError(w, err)
			return
		}
		w, r, end, err := s.cfg.Gate.HTTP(w, r, p, need)
		defer end()
		if err != nil {
			httpjson.WriteError(w, err)
			return
		}
		next(w, r)
	}
}

// principal is who r's "Authorization: Bearer" key stands for.
func (s *Server) principal(r *http.Request) (auth.Principal, error) {
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return auth.Principal{}, errdefs.Unauthorized(wire.CodeUnauthorized, "missing API key: send \"Authorization: Bearer <key>\" with a key of the gateway")
	}
	return s.cfg.Gate.Key(r.Context(), key)
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) error {
	httpjson.Write(w, http.StatusOK, map[string]bool{"ok": true})
	return nil
}

// openapi serves a host's document: the gateway serves the same API.
func (s *Server) openapi(w http.ResponseWriter, r *http.Request) error {
	hosts := s.cluster.readyHosts()
	if len(hosts) == 0 {
		return errdefs.Unavailable(wire.CodeSandboxUnavailable, "no sbx host is ready to serve the API document")
	}
	s.forward(w, r, hosts[0], r.URL.EscapedPath(), false)
	return nil
}

// notInCluster answers routes the gateway does not serve, in the API's
// unknown-route format, saying why.
func (s *Server) notInCluster(why string) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		return errdefs.NotFound(wire.CodeRouteNotFound, "%s %s is not served by the cluster gateway: %s", r.Method, r.URL.Path, why)
	}
}
