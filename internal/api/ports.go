package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/network"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Networking is what the API needs to serve sandbox networks and previews.
type Networking struct {
	Network  *network.Manager  // nil when the daemon runs without networking
	Previews *network.Previews // exposed ports, tokens and signed URLs
	// PreviewActivity makes preview requests count as activity of the
	// sandbox (they keep it from being stopped for idleness).
	PreviewActivity bool
}

// SetNetworking enables the network and preview routes. Call it before
// serving.
func (s *Server) SetNetworking(n Networking) { s.net = &n }

func (s *Server) previews() (*network.Previews, error) {
	if s.net == nil || s.net.Previews == nil {
		return nil, errdefs.Unavailable(wire.CodeNetworkUnavailable, "this daemon runs without networking")
	}
	return s.net.Previews, nil
}

func (s *Server) networkInfo(sb *store.Sandbox) wire.NetworkInfo {
	var info wire.NetworkInfo
	info.Mode, info.Egress = networkOf(sb.Spec)
	if info.Mode != wire.NetworkBridge {
		return info
	}
	if s.net != nil && s.net.Network != nil {
		info.Gateway = s.net.Network.Gateway().String()
		if ip, ok := s.net.Network.Address(sb.ID); ok && sb.State == wire.StateStarted {
			info.Address = ip.String()
		}
	}
	return info
}

func (s *Server) getNetwork(w http.ResponseWriter, r *http.Request) error {
	sb, err := s.sandboxes.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.networkInfo(sb))
	return nil
}

func (s *Server) setEgress(w http.ResponseWriter, r *http.Request) error {
	var p wire.EgressPolicy
	if err := decodeJSON(w, r, &p); err != nil {
		return err
	}
	if p.HTTP != nil { // secret.go: inject rules must name existing secrets
		sb, err := s.sandboxes.Get(r.Context(), r.PathValue("id"))
		if err != nil {
			return err
		}
		if err := s.checkSecrets(r.Context(), sb.Team, &p); err != nil {
			return err
		}
	}
	sb, err := s.sandboxes.SetEgress(r.Context(), r.PathValue("id"), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.networkInfo(sb))
	return nil
}

func (s *Server) exposePort(w http.ResponseWriter, r *http.Request) error {
	pv, err := s.previews()
	if err != nil {
		return err
	}
	var req wire.ExposePortRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	sb, err := s.sandboxes.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	if sb.Spec.Network != wire.NetworkBridge {
		return errdefs.Conflict(wire.CodeNoNetwork, "sandbox %s has network %q; only bridge sandboxes can expose ports", r.PathValue("id"), sb.Spec.Network)
	}
	existed := false
	if _, err := pv.Get(r.Context(), sb.ID, req.Port); err == nil {
		existed = true
	}
	rec, err := pv.Expose(r.Context(), sb.ID, req.Port, req.Public)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if existed {
		status = http.StatusOK
	}
	writeJSON(w, status, s.portToAPI(r, *rec))
	return nil
}

func (s *Server) listPorts(w http.ResponseWriter, r *http.Request) error {
	pv, err := s.previews()
	if err != nil {
		return err
	}
	sb, err := s.sandboxes.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	list, err := pv.List(r.Context(), sb.ID)
	if err != nil {
		return err
	}
	out := make([]wire.Port, 0, len(list))
	for _, p := range list {
		out = append(out, s.portToAPI(r, p))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) unexposePort(w http.ResponseWriter, r *http.Request) error {
	pv, err := s.previews()
	if err != nil {
		return err
	}
	port, err := portParam(r.PathValue("port"))
	if err != nil {
		return err
	}
	sb, err := s.sandboxes.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := pv.Unexpose(r.Context(), sb.ID, port); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) signURL(w http.ResponseWriter, r *http.Request) error {
	pv, err := s.previews()
	if err != nil {
		return err
	}
	var req wire.SignPortRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	ttl := time.Duration(req.ExpiresInSeconds) * time.Second
	if req.ExpiresInSeconds == 0 {
		ttl = network.DefaultSignedTTL
	}
	if ttl <= 0 || ttl > network.MaxSignedTTL {
		return errdefs.Invalid(wire.CodeInvalidExpiry, "expiresInSeconds must be from 1 to %d", int(network.MaxSignedTTL.Seconds()))
	}
	sb, err := s.sandboxes.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	rec, err := pv.Get(r.Context(), sb.ID, req.Port)
	if err != nil {
		return err
	}
	exp := time.Now().Add(ttl).Truncate(time.Second)
	q := url.Values{network.ExpiresParam: {strconv.FormatInt(exp.Unix(), 10)}, network.SigParam: {pv.Sign(rec, exp)}}
	base := pv.HostURL(sb.ID, req.Port)
	if base == "" {
		base = pathURL(r, sb.ID, req.Port)
	}
	writeJSON(w, http.StatusCreated, wire.SignedURL{URL: base + "?" + q.Encode(), ExpiresAt: exp.UTC()})
	return nil
}

func (s *Server) portToAPI(r *http.Request, p store.Port) wire.Port {
	out := wire.Port{Port: p.Port, Public: p.Public, Token: p.Token, CreatedAt: p.CreatedAt,
		PathURL: pathURL(r, p.SandboxID, p.Port), HostURL: s.net.Previews.HostURL(p.SandboxID, p.Port)}
	out.URL = out.HostURL
	if out.URL == "" {
		out.URL = out.PathURL
	}
	return out
}

// pathURL is the path-based preview URL of a port on the daemon the request
// came to.
func pathURL(r *http.Request, id string, port int) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return fmt.Sprintf("%s://%s/v1/sandboxes/%s/ports/%d/", scheme, r.Host, id, port)
}

func portParam(s string) (int, error) {
	p, err := strconv.Atoi(s)
	if err != nil || p < 1 || p > 65535 {
		return 0, errdefs.Invalid(wire.CodeInvalidPort, "port must be a number from 1 to 65535, got %q", s)
	}
	return p, nil
}

// previewPath serves /v1/sandboxes/{id}/ports/{port}/{path...}.
func (s *Server) previewPath(w http.ResponseWriter, r *http.Request) error {
	port, err := portParam(r.PathValue("port"))
	if err != nil {
		return err
	}
	prefix := "/v1/sandboxes/" + r.PathValue("id") + "/ports/" + r.PathValue("port")
	// Keep the path's own escaping: strip the prefix from the raw path.
	raw := r.URL.EscapedPath()
	i := strings.Index(raw, "/ports/")
	rest := raw[i+len("/ports/"):]
	rest = rest[strings.IndexByte(rest, '/'):]
	return s.servePreview(w, r, r.PathValue("id"), port, rest, prefix+"/")
}

// servePreviewHost serves a request whose Host is a host-based preview
// name; it reports false when the Host is not one.
func (s *Server) servePreviewHost(w http.ResponseWriter, r *http.Request) bool {
	if s.net == nil || s.net.Previews == nil {
		return false
	}
	port, sandbox, ok := s.net.Previews.ParseHost(r.Host)
	if !ok {
		return false
	}
	if err := s.servePreview(w, r, sandbox, port, r.URL.EscapedPath(), "/"); err != nil {
		writeError(w, r, err)
	}
	return true
}

// servePreview serves a preview request. One with an API key goes through
// the gate (internal/authz) as an exec: reaching a port talks to the
// sandbox's own processes and may start it, as the toolbox routes do, so a
// read-only key reaches no private port and wakes nothing; it is rate
// limited, and audited unless its method only reads. Without a key the
// port's token or signature decides (proxyPreview).
func (s *Server) servePreview(w http.ResponseWriter, r *http.Request, idOrName string, port int, path, cookiePath string) error {
	p, err := s.principal(r)
	if err != nil {
		return s.proxyPreview(w, r, idOrName, port, path, cookiePath)
	}
	w, r, end, err := s.gate.HTTP(w, r, p, authz.Op{Method: r.Method, Path: r.URL.Path, Scope: auth.ScopeExec, Write: previewWrites(r)})
	defer end()
	if err == nil {
		err = s.proxyPreview(w, r, idOrName, port, path, cookiePath)
	}
	if err != nil {
		writeError(w, r, err)
	}
	return nil
}

// previewWrites reports whether a preview request may change something
// (and so is audited).
func previewWrites(r *http.Request) bool {
	return r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions
}

// proxyPreview checks access to port of a sandbox, starts the sandbox if it
// is stopped, and proxies the request to the port. path is the escaped path
// for the sandbox's server; cookiePath scopes the access cookie.
func (s *Server) proxyPreview(w http.ResponseWriter, r *http.Request, idOrName string, port int, path, cookiePath string) error {
	pv, err := s.previews()
	if err != nil {
		return err
	}
	if s.net.Network == nil {
		return errdefs.Unavailable(wire.CodeNetworkUnavailable, "this daemon runs without networking: previews are off")
	}
	unauthorized := errdefs.Unauthorized(wire.CodePreviewUnauthorized, "port %d of sandbox %s is private: send the API key, the port's token (header %s or ?%s=) or use a signed URL", port, idOrName, network.TokenHeader, network.TokenParam)
	// A caller with an API key (servePreview) looks up as its team:
	// another team's sandbox is not found, and its key opens no preview of
	// it. Without a key the port's own token decides (authorizePreview), so
	// the lookup runs in the system scope, named; a bare name still finds
	// team default's sandbox only (previewSandbox).
	if _, keyed := auth.FromContext(r.Context()); !keyed {
		r = r.WithContext(auth.System(r.Context(), "preview by token"))
	}
	sb, err := previewSandbox(r.Context(), s.sandboxes.Get, idOrName)
	var rec *store.Port
	if err == nil {
		rec, err = pv.Get(r.Context(), sb.ID, port)
	}
	if err != nil {
		// Only the API key learns that a sandbox or port does not exist:
		// anyone else gets the answer a private port gives, so previews
		// cannot be used to enumerate sandbox names and ports.
		if s.hasAPIKey(r) {
			return errdefs.NotFound(wire.CodePreviewNotFound, "no exposed port %d on sandbox %s", port, idOrName)
		}
		return unauthorized
	}
	cookie, by, ok := s.authorizePreview(r, pv, rec)
	if !ok {
		return unauthorized
	}
	if by != nil {
		// A token, signed URL or cookie acts for the key that exposed the
		// port: it takes that key's steps through the gate (its rate limit,
		// an audit entry for a write) as the key itself would. Its request
		// keeps no principal: the sandbox's server gets its own headers.
		var end func()
		w, _, end, err = s.gate.HTTP(w, r, *by, authz.Op{Method: r.Method, Path: r.URL.Path, Scope: auth.ScopeSandboxesWrite, Write: previewWrites(r)})
		defer end()
		if err != nil {
			writeError(w, r, err)
			return nil
		}
	}
	// A stopped sandbox starts (lazy start) before the request goes on, and
	// its server gets a moment to listen; except through a route that only
	// reads a running one (lookup.go).
	if s.onlyRunning(r) {
		if _, sb, err = s.runningAgent(r.Context(), sb.ID); err != nil {
			return err
		}
	} else if sb, err = s.sandboxes.EnsureServing(r.Context(), sb.ID, port); err != nil {
		return err
	}
	if s.net.PreviewActivity {
		release := s.sandboxes.Hold(r.Context(), sb.ID)
		defer release()
	}
	if cookie != nil {
		cookie.Path = cookiePath
		cookie.HttpOnly, cookie.SameSite, cookie.Secure = true, http.SameSiteLaxMode, r.TLS != nil
		http.SetCookie(w, cookie)
	}
	query := s.stripCredentials(r)
	rp := &httputil.ReverseProxy{
		Transport:     s.net.Network.Transport(),
		FlushInterval: -1, // stream
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = "http"
			pr.Out.URL.Host = network.TargetHost(sb.ID, port)
			pr.Out.URL.Path, _ = url.PathUnescape(path)
			pr.Out.URL.RawPath = path
			pr.Out.URL.RawQuery = query
			pr.Out.Host = r.Host // what the browser asked for; dev servers check it
			pr.SetXForwarded()
			if cookiePath != "/" {
				pr.Out.Header.Set("X-Forwarded-Prefix", strings.TrimSuffix(cookiePath, "/"))
			}
		},
		ModifyResponse: func(resp *http.Response) error {
			network.SecurePreviewResponse(resp.Header, cookiePath) // CSP sandbox, cookies scoped
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			writeError(w, r, &errdefs.Error{Kind: errdefs.KindUnavailable, Code: wire.CodePreviewUnreachable,
				Message: fmt.Sprintf("nothing answers on port %d of sandbox %s: is a server listening on 0.0.0.0:%d inside?", port, idOrName, port), Err: err})
		},
	}
	rp.ServeHTTP(w, r)
	return nil
}

// previewSandbox finds the sandbox a preview URL names (see
// network.PreviewTarget) with get (the Manager's Get). Without an API key
// in ctx a bare name is looked up in team default only, never across
// teams: another team's sandbox of the same name cannot take its URL.
func previewSandbox(ctx context.Context, get func(context.Context, string) (*store.Sandbox, error), ref string) (*store.Sandbox, error) {
	notFound := errdefs.NotFound(wire.CodeSandboxNotFound, "sandbox %q not found", ref)
	id, name, team := network.PreviewTarget(ref)
	if id != "" {
		sb, err := get(ctx, id)
		if err != nil || sb.ID != id {
			return nil, notFound
		}
		return sb, nil
	}
	if _, keyed := auth.FromContext(ctx); keyed && team == "" {
		return get(ctx, name) // the key's own team
	}
	if team == "" {
		team = auth.DefaultTeam
	}
	if !auth.Sees(ctx, team) {
		return nil, notFound
	}
	// Looked up as a member of team: the store's team scoping (auth.Sees)
	// then finds that team's sandbox only.
	sb, err := get(auth.WithPrincipal(ctx, auth.Principal{Team: team}), name)
	if err != nil || sb.Name != name || !sameTeam(sb.Team, team) {
		return nil, notFound
	}
	return sb, nil
}

func sameTeam(a, b string) bool {
	if a == "" {
		a = auth.DefaultTeam
	}
	return a == b
}

// authorizePreview decides whether r may open the port. When access came
// through a token or signature in the URL it returns the cookie that keeps
// access for the browser's next requests.
//
// by is the principal of the key that exposed the port when a token,
// signed URL or cookie let r in: r then acts for that key. It is nil for a
// public port, an API key (already through the gate) and a port exposed
// before sbx recorded its key.
func (s *Server) authorizePreview(r *http.Request, pv *network.Previews, rec *store.Port) (cookie *http.Cookie, by *auth.Principal, ok bool) {
	if rec.Public || s.hasAPIKey(r) {
		return nil, nil, true
	}
	// Tokens, signed URLs and their cookies are derived from the key that
	// exposed the port: they die with it. A port exposed before sbx
	// recorded that key (CreatedBy "") keeps its token.
	if rec.CreatedBy != "" {
		p, err := auth.LookupKey(r.Context(), s.auth, rec.CreatedBy)
		if err != nil {
			return nil, nil, false
		}
		by = &p
	}
	if network.CheckToken(rec, r.Header.Get(network.TokenHeader)) {
		return nil, by, true
	}
	q := r.URL.Query()
	if t := q.Get(network.TokenParam); t != "" && network.CheckToken(rec, t) {
		return &http.Cookie{Name: network.CookieName, Value: t}, by, true
	}
	now := time.Now()
	if exp, sig := q.Get(network.ExpiresParam), q.Get(network.SigParam); sig != "" && pv.CheckSignature(rec, exp, sig, now) {
		e, _ := strconv.ParseInt(exp, 10, 64)
		return &http.Cookie{Name: network.CookieName, Value: "s." + exp + "." + sig, Expires: time.Unix(e, 0)}, by, true
	}
	for _, c := range r.Cookies() {
		if c.Name != network.CookieName {
			continue
		}
		if network.CheckToken(rec, c.Value) {
			return nil, by, true
		}
		if parts := strings.Split(c.Value, "."); len(parts) == 3 && parts[0] == "s" && pv.CheckSignature(rec, parts[1], parts[2], now) {
			return nil, by, true
		}
	}
	return nil, nil, false
}

// hasAPIKey reports whether r came through the gate with an API key
// (servePreview).
func (s *Server) hasAPIKey(r *http.Request) bool {
	_, ok := auth.FromContext(r.Context())
	return ok
}

// stripCredentials removes sbx's own credentials from a preview request, so
// the sandbox never sees the API key, a token or a signature, and returns
// the query to forward.
func (s *Server) stripCredentials(r *http.Request) string {
	if s.hasAPIKey(r) {
		r.Header.Del("Authorization")
	}
	r.Header.Del(network.TokenHeader)
	if cookies := r.Cookies(); len(cookies) > 0 {
		var keep []string
		for _, c := range cookies {
			if c.Name != network.CookieName {
				keep = append(keep, c.Name+"="+c.Value)
			}
		}
		r.Header.Del("Cookie")
		if len(keep) > 0 {
			r.Header.Set("Cookie", strings.Join(keep, "; "))
		}
	}
	q := r.URL.Query()
	if !q.Has(network.TokenParam) && !q.Has(network.ExpiresParam) && !q.Has(network.SigParam) {
		return r.URL.RawQuery // forward it byte for byte
	}
	q.Del(network.TokenParam)
	q.Del(network.ExpiresParam)
	q.Del(network.SigParam)
	return q.Encode()
}

// previewDoc and previewQ document the path-based preview routes.
const previewDoc = "Preview: proxy to an exposed port (HTTP, streams, WebSocket). Needs an API key with scope exec, the port's token (header X-Sbx-Preview-Token, query sbx_token, or the cookie that sets) or a signed URL, unless the port is public"

var previewQ = []param{
	{"sbx_token", "string", "the port's preview token"},
	{"sbx_expires", "integer", "signed URL: expiry in unix seconds"},
	{"sbx_sig", "string", "signed URL: signature"},
}

// networkOf is the network mode and egress policy of a sandbox on the wire.
func networkOf(spec store.Spec) (string, *wire.EgressPolicy) {
	if spec.Network != wire.NetworkBridge {
		return wire.NetworkNone, nil
	}
	return wire.NetworkBridge, network.EgressToAPI(spec.Egress)
}
