// Package e2b serves E2B's APIs on top of sbx, so that E2B's official SDKs
// (npm "e2b", "@e2b/code-interpreter") work unchanged with
//
//	E2B_API_URL=http://<sbx>/e2b            the control plane (rest.go)
//	E2B_SANDBOX_URL=http://<sbx>/e2b/sandbox envd and the code interpreter
//	E2B_API_KEY=<an sbx API key>
//
// With E2B_SANDBOX_URL every envd and code-interpreter request comes to one
// URL and names its sandbox and port in the E2b-Sandbox-Id and
// E2b-Sandbox-Port headers (49983: envd, 49999: the code interpreter).
// Everything is translated to the sandbox Manager and the agent's API: this
// package keeps no sandbox state of its own.
package e2b

import (
	"context"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Prefix is where the daemon mounts the E2B surface; SandboxPrefix (below
// it) is E2B_SANDBOX_URL's path.
const (
	Prefix        = "/e2b/"
	SandboxPrefix = "/e2b/sandbox/"
)

// The ports E2B's SDK addresses inside a sandbox.
const (
	EnvdPort        = 49983
	InterpreterPort = 49999
)

// EnvdVersion is the envd version advertised to the SDK. The SDK switches
// behaviour on it: >= 0.4.0 sends no default user (sbx uses DefaultUser),
// >= 0.5.2 offers closeStdin, >= 0.5.7 may upload files as octet-stream
// (both upload forms are served). 0.6.2+ would promise file metadata, which
// sbx does not keep.
const EnvdVersion = "0.5.7"

// DefaultUser is the account E2B runs commands as when the caller names none.
const DefaultUser = "user"

// Sandboxes is what the E2B layer needs of the sandbox Manager.
type Sandboxes interface {
	Create(ctx context.Context, req wire.CreateSandboxRequest) (*store.Sandbox, error)
	List(ctx context.Context, f store.Filter) ([]*store.Sandbox, error)
	Get(ctx context.Context, idOrName string) (*store.Sandbox, error)
	Delete(ctx context.Context, idOrName string, wait bool) (*store.Sandbox, error)
	Update(ctx context.Context, idOrName string, req wire.UpdateSandboxRequest) (*store.Sandbox, error)
	Pause(ctx context.Context, idOrName string) (*store.Sandbox, error)
	Resume(ctx context.Context, idOrName string) (*store.Sandbox, error)
	Stop(ctx context.Context, idOrName string, opt sandbox.StopOptions) (*store.Sandbox, error)
	Agent(ctx context.Context, idOrName string) (*agentapi.Client, *store.Sandbox, error)
	SetEgress(ctx context.Context, idOrName string, p wire.EgressPolicy) (*store.Sandbox, error)
	VolumeUsers(ctx context.Context, name string) ([]string, error) // volumes.go
	Snapshots                                                       // snapshots.go
}

// Config is the E2B layer's settings.
type Config struct {
	// Templates maps E2B template ids and aliases to sbx images (or
	// snapshots, as "snapshot:<name>"); DefaultTemplates fills the gaps.
	Templates map[string]string
	// TokenSecret signs the envd access tokens handed out at create
	// (tokens.go); the daemon passes its admin token, so they survive
	// restarts.
	TokenSecret []byte
	// Domain is the sandbox domain reported to the SDK: the preview
	// domain, without a scheme, perhaps with a port; "" reports
	// "localhost" (rest.go).
	Domain string
	// Usage reads what a sandbox uses now (getMetrics); nil refuses
	// getMetrics.
	Usage Usage
	// Volumes are sbx's named volumes (volumes.go); nil refuses Volume.*.
	Volumes Volumes
	// Secrets are sbx's secrets (secrets.go); nil refuses Secret.*.
	Secrets Secrets
	// Ports exposes a sandbox port for a request with E2B's traffic
	// token (ports.go); nil: only ports exposed through sbx are served.
	Ports Ports
	// Forward, when set, takes a sandbox's envd and code-interpreter
	// requests once the access token and the gate admit them, instead of
	// this layer serving them: the cluster gateway forwards them to the
	// host that runs the sandbox, whose own E2B layer serves them.
	Forward func(w http.ResponseWriter, r *http.Request, id string) error
}

// Usage is internal/metrics.Sampler as getMetrics needs it.
type Usage interface {
	Stats(sb *store.Sandbox) wire.SandboxStats
}

// DefaultTemplates: E2B's two stock templates both run on sbx's python
// image (bash, python with numpy/pandas/matplotlib, node, the "user" account).
var DefaultTemplates = map[string]string{
	"base":                "python",
	"code-interpreter-v1": "python",
	"code-interpreter":    "python",
}

// Server serves the E2B APIs.
type Server struct {
	sandboxes Sandboxes
	gate      *authz.Gate // every request's way in (ops.go)
	cfg       Config
	envd      http.Handler // Connect-RPC services (envd.go)
	now       func() time.Time
}

// New returns the E2B layer over the Manager; gate checks X-API-KEY and
// every operation's scope.
func New(sandboxes Sandboxes, gate *authz.Gate, cfg Config) *Server {
	templates := map[string]string{}
	for k, v := range DefaultTemplates {
		templates[k] = v
	}
	for k, v := range cfg.Templates {
		templates[k] = v
	}
	cfg.Templates = templates
	s := &Server{sandboxes: sandboxes, gate: gate, cfg: cfg, now: time.Now}
	s.envd = s.envdHandler()
	return s
}

// ServeHTTP routes /e2b/sandbox/… by the E2b-Sandbox-Port header and
// everything else under /e2b/ to the control plane.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sandboxRoot := strings.TrimSuffix(SandboxPrefix, "/")
	if rest, ok := strings.CutPrefix(r.URL.Path, sandboxRoot); ok && (rest == "" || rest[0] == '/') {
		s.serveSandbox(w, r, r.Header.Get("E2b-Sandbox-Id"), r.Header.Get("E2b-Sandbox-Port"), rest)
		return
	}
	s.serveAPI(w, r, strings.TrimPrefix(r.URL.Path, strings.TrimSuffix(Prefix, "/")))
}

// Surface is where the E2B layer is served: sbx's API server.
type Surface interface {
	Mount(prefix string, h http.Handler)
	MountHost(h func(http.ResponseWriter, *http.Request) bool)
}

// Attach serves s on the API server: everything under Prefix, and the
// host names {49983|49999}-{sandbox}.{Config.Domain} ahead of sbx's own
// previews.
func (s *Server) Attach(api Surface) {
	api.Mount(Prefix, s)
	api.MountHost(func(w http.ResponseWriter, r *http.Request) bool { return s.ServeHost(w, r, s.cfg.Domain) })
}

// ServeHost serves a request to {port}-{sandboxID}.{domain} (the SDK's URL
// without E2B_SANDBOX_URL) and reports whether host was such a name for an
// E2B port; the daemon asks it before its own previews.
func (s *Server) ServeHost(w http.ResponseWriter, r *http.Request, domain string) bool {
	if domain == "" {
		return false
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if d, _, err := net.SplitHostPort(domain); err == nil {
		domain = d // the preview domain may name a port
	}
	label, ok := strings.CutSuffix(strings.ToLower(host), "."+strings.ToLower(domain))
	if !ok {
		return false
	}
	port, id, ok := strings.Cut(label, "-")
	if !ok {
		return false
	}
	if port != "49983" && port != "49999" {
		return s.trafficToken(w, r, id, port) // ports.go
	}
	s.serveSandbox(w, r, id, port, r.URL.Path)
	return true
}

// serveSandbox serves envd (49983) or the code interpreter (49999) of one
// sandbox; path is the request's path below the sandbox URL.
func (s *Server) serveSandbox(w http.ResponseWriter, r *http.Request, id, port, path string) {
	if id == "" {
		writeEnvdError(w, http.StatusBadRequest, "missing E2b-Sandbox-Id header")
		return
	}
	var p auth.Principal
	var err error
	if r.Header.Get("X-Access-Token") == "" && r.Header.Get("E2B-Traffic-Access-Token") == "" && r.URL.Query().Has("signature") && port != "49999" {
		p, err = s.checkSignature(r, id, path) // signed.go: uploadUrl, downloadUrl
	} else {
		p, err = s.checkAccessToken(r, id) // tokens.go
	}
	if err != nil {
		writeEnvdError(w, http.StatusUnauthorized, err.Error())
		return
	}
	// The token stands for its key's principal; the operation still
	// takes every step of the gate.
	w, r, end, err := s.gate.HTTP(w, r, p, sandboxOp(port, r.Method, path).At(r.Method, "/e2b/sandbox/"+id+":"+port+path))
	defer end()
	if err != nil {
		writeAPIError(w, err)
		return
	}
	if s.cfg.Forward != nil {
		if err := s.cfg.Forward(w, r, id); err != nil {
			writeAPIError(w, err)
		}
		return
	}
	r.Header.Set(sandboxHeader, id) // the id the host named, for s.box
	r.URL.Path = path
	if r.URL.RawPath != "" {
		r.URL.RawPath = ""
	}
	switch port {
	case "49999":
		s.serveInterpreter(w, r) // interpreter.go
	case "49983", "":
		s.serveEnvd(w, r) // envd.go
	default:
		writeEnvdError(w, http.StatusBadGateway, "sbx's E2B layer serves ports 49983 (envd) and 49999 (code interpreter) only; for other ports use sbx previews")
	}
}
