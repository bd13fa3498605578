package e2b

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// The control plane as the SDK calls it (E2B_API_URL): the current /v2
// paths and the older ones. Errors are E2B's {"code": <status>, "message"}.

// Labels that keep E2B's fields on an sbx sandbox.
const (
	labelTemplate = "e2b.template"
	labelMeta     = "e2b.meta." // + metadata key
)

// DefaultTimeoutSeconds is E2B's default sandbox timeout.
const DefaultTimeoutSeconds = 300

// sandboxJSON is E2B's Sandbox / ListedSandbox / SandboxDetail.
type sandboxJSON struct {
	SandboxID          string            `json:"sandboxID"`
	TemplateID         string            `json:"templateID"`
	Alias              string            `json:"alias,omitempty"`
	ClientID           string            `json:"clientID"`
	EnvdVersion        string            `json:"envdVersion"`
	EnvdAccessToken    string            `json:"envdAccessToken,omitempty"`
	TrafficAccessToken string            `json:"trafficAccessToken,omitempty"`
	Domain             *string           `json:"domain"`
	StartedAt          time.Time         `json:"startedAt"`
	EndAt              *time.Time        `json:"endAt,omitempty"` // none without a TTL or idle pause
	State              string            `json:"state"`
	CPUCount           int               `json:"cpuCount"`
	MemoryMB           int               `json:"memoryMB"`
	DiskSizeMB         int               `json:"diskSizeMB"`
	Metadata           map[string]string `json:"metadata"`
}

// createBody is E2B's NewSandbox. Every field it names is honoured or
// refused (createRequest); a field it does not name is refused by the
// decoder, so no security option is ever dropped.
type createBody struct {
	TemplateID string            `json:"templateID"`
	Timeout    *int              `json:"timeout"`
	Metadata   map[string]string `json:"metadata"`
	EnvVars    map[string]string `json:"envVars"`
	AutoPause  *bool             `json:"autoPause"`
	// Secure asks envd to require the access token: this layer's envd
	// always does (tokens.go), so true is honoured and false refused.
	Secure              *bool          `json:"secure"`
	AllowInternetAccess *bool          `json:"allow_internet_access"`
	Network             *createNetwork `json:"network"`
	// Not implemented: refused when set.
	AutoPauseMemory *bool           `json:"autoPauseMemory"`
	AutoResume      json.RawMessage `json:"autoResume"`
	MCP             json.RawMessage `json:"mcp"`
	IAM             json.RawMessage `json:"iam"`
	// volumeMounts: sbx volumes mounted at their paths (volumes.go).
	VolumeMounts []volumeMount `json:"volumeMounts"`
}

// volumeMount is one of E2B's volumeMounts: volume name at path.
type volumeMount struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// createNetwork is E2B's SandboxNetworkConfig. allowOut wins over denyOut.
type createNetwork struct {
	AllowOut           []string        `json:"allowOut"`
	DenyOut            []string        `json:"denyOut"`
	AllowPublicTraffic *bool           `json:"allowPublicTraffic"`
	MaskRequestHost    *string         `json:"maskRequestHost"`
	HTTPSPorts         json.RawMessage `json:"httpsPorts"`
	EgressProxy        json.RawMessage `json:"egressProxy"`
	Rules              json.RawMessage `json:"rules"`
}

// allTraffic is how E2B's SDKs deny everything in denyOut.
const allTraffic = "0.0.0.0/0"

func isSet(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// unsupported refuses a create field this layer does not implement.
func unsupported(field, why string) error {
	return errdefs.Invalid(wire.CodeInvalidParameter, "%s is not supported by sbx's E2B layer (%s); leave it out", field, why)
}

// egressOf maps allow_internet_access and network's allowOut/denyOut onto
// an sbx egress policy: nil (allow-all), block-all, an allow-list (all
// traffic denied but allowOut) or a deny-list (denyOut alone). A mix the
// policies cannot express is refused.
func egressOf(allowInternet *bool, n *createNetwork) (*wire.EgressPolicy, error) {
	var allow, deny []string
	denyAll := allowInternet != nil && !*allowInternet
	if n != nil {
		allow = n.AllowOut
		for _, d := range n.DenyOut {
			if d == allTraffic {
				denyAll = true
			} else {
				deny = append(deny, d)
			}
		}
	}
	switch {
	case denyAll && len(allow) == 0:
		return &wire.EgressPolicy{Mode: wire.EgressBlockAll}, nil
	case denyAll: // everything else is denied already: deny adds nothing
		p := &wire.EgressPolicy{Mode: wire.EgressAllowList}
		for _, a := range allow {
			if _, err := netip.ParsePrefix(a); err == nil {
				p.CIDRs = append(p.CIDRs, a)
			} else if _, err := netip.ParseAddr(a); err == nil {
				p.CIDRs = append(p.CIDRs, a)
			} else {
				p.Domains = append(p.Domains, a)
			}
		}
		return p, nil
	case len(deny) > 0 && len(allow) > 0:
		return nil, errdefs.Invalid(wire.CodeInvalidParameter,
			"network.allowOut with network.denyOut other than %s cannot be mapped onto an sbx egress policy; deny %s and list what is allowed, or give denyOut alone", allTraffic, allTraffic)
	case len(deny) > 0:
		return &wire.EgressPolicy{Mode: wire.EgressDenyList, CIDRs: deny}, nil
	}
	return nil, nil // allowOut alone: everything is allowed already
}

// serveAPI serves the control plane: each request goes through the gate
// (internal/authz) as its route needs (ops.go).
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request, path string) {
	path = strings.TrimPrefix(strings.TrimPrefix(path, "/v2"), "/v3")
	if strings.HasPrefix(path, "/volumecontent/") {
		s.serveVolumeContent(w, r, path) // volumecontent.go: a volume token, not a key
		return
	}
	// Refused before the routes (DELETE /templates/tags is no template's
	// delete) and the key check (the answer names no one's data).
	if err := refused(r.Method, path); err != nil {
		writeAPIError(w, err)
		return
	}
	var rt *restRoute
	var id string
	for _, c := range s.restRoutes() {
		if cid, ok := c.match(r.Method, path); ok {
			rt, id = &c, cid
			break
		}
	}
	if rt == nil {
		writeAPIError(w, errdefs.NotFound(wire.CodeRouteNotFound, "sbx's E2B layer does not serve %s %s", r.Method, path))
		return
	}
	key := r.Header.Get("X-API-KEY")
	if key == "" {
		if k, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			key = k
		}
	}
	p, err := s.gate.Key(r.Context(), key)
	if err != nil {
		writeAPIError(w, errdefs.Unauthorized(wire.CodeUnauthorized, "invalid API key: set E2B_API_KEY to an sbx API key"))
		return
	}
	w, r, end, err := s.gate.HTTP(w, r, p, rt.need)
	defer end()
	if err == nil {
		err = rt.fn(w, r, id)
	}
	if err != nil {
		writeAPIError(w, err)
	}
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request, id string) error {
	if _, err := s.sandboxes.Delete(r.Context(), id, false); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) create(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	var body createBody
	// An option this layer does not know is refused, not dropped.
	if err := decodeJSON(w, r, &body, true); err != nil {
		return err
	}
	req, err := s.createRequest(r.Context(), body)
	if err != nil {
		return err
	}
	sb, err := s.sandboxes.Create(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, s.toE2B(sb, p, true))
	return nil
}

// createRequest translates E2B's create into sbx's: template → image,
// timeout → TTL (delete), or with autoPause an idle pause after timeout
// instead; metadata → labels; envVars → env.
func (s *Server) createRequest(ctx context.Context, body createBody) (wire.CreateSandboxRequest, error) {
	tmpl := body.TemplateID
	if tmpl == "" {
		tmpl = "base"
	}
	target, ok := s.cfg.Templates[tmpl]
	if !ok {
		// A snapshot made by createSnapshot starts a sandbox as a template does.
		if _, err := s.sandboxes.GetSnapshot(ctx, tmpl); err == nil {
			target, ok = "snapshot:"+tmpl, true
		}
	}
	if !ok {
		return wire.CreateSandboxRequest{}, errdefs.NotFound(wire.CodeImageNotFound, "template %q not found: sbx knows %s and its snapshots (sbx serve --e2b-template alias=image adds more)", tmpl, strings.Join(s.templateNames(), ", "))
	}
	req := wire.CreateSandboxRequest{Env: body.EnvVars, Labels: map[string]string{labelTemplate: tmpl}}
	switch n := body.Network; {
	case body.Secure != nil && !*body.Secure:
		return req, unsupported("secure: false", "envd always requires the access token")
	case body.AutoPauseMemory != nil && !*body.AutoPauseMemory:
		return req, unsupported("autoPauseMemory: false", "a paused sandbox keeps its memory")
	case isSet(body.AutoResume):
		return req, unsupported("autoResume", "resume with Sandbox.connect")
	case isSet(body.MCP):
		return req, unsupported("mcp", "no MCP gateway")
	case isSet(body.IAM):
		return req, unsupported("iam", "no IAM tokens")
	case n == nil:
	case n.AllowPublicTraffic != nil && *n.AllowPublicTraffic:
		// false is what sbx does: a port answers the traffic token (ports.go).
		return req, unsupported("network.allowPublicTraffic: true", "a port is reached with the sandbox's traffic token (header e2b-traffic-access-token); make one public with sbx port expose --public")
	case n.MaskRequestHost != nil:
		return req, unsupported("network.maskRequestHost", "previews pass the Host header through")
	case isSet(n.HTTPSPorts):
		return req, unsupported("network.httpsPorts", "no TLS termination per port")
	case isSet(n.EgressProxy):
		return req, unsupported("network.egressProxy", "use sbx's egress policies")
	case isSet(n.Rules):
		return req, unsupported("network.rules", "use sbx's egress policies")
	}
	egress, err := egressOf(body.AllowInternetAccess, body.Network)
	if err != nil {
		return req, err
	}
	if egress != nil {
		req.Network, req.Egress = wire.NetworkBridge, egress
	}
	if snap, ok := strings.CutPrefix(target, "snapshot:"); ok {
		req.Snapshot = snap
	} else {
		req.Image = target
	}
	for k, v := range body.Metadata {
		req.Labels[labelMeta+k] = v
	}
	for _, m := range body.VolumeMounts {
		req.Volumes = append(req.Volumes, wire.VolumeMount{Name: m.Name, Path: m.Path})
	}
	timeout := DefaultTimeoutSeconds
	if body.Timeout != nil {
		timeout = *body.Timeout
	}
	if timeout <= 0 {
		return req, errdefs.Invalid(wire.CodeInvalidParameter, "timeout must be a positive number of seconds, got %d", timeout)
	}
	if body.AutoPause != nil && *body.AutoPause {
		never := 0
		req.AutoPauseSeconds, req.AutoStopSeconds = &timeout, &never
	} else {
		req.TTLSeconds = timeout
	}
	return req, nil
}

// updateNetwork replaces the sandbox's egress policy (updateNetwork):
// allow_internet_access and allowOut/denyOut map as at create; no
// restriction at all is allow-all. What create refuses is refused here too.
func (s *Server) updateNetwork(w http.ResponseWriter, r *http.Request, id string) error {
	var body struct {
		AllowOut            []string        `json:"allowOut"`
		DenyOut             []string        `json:"denyOut"`
		AllowInternetAccess *bool           `json:"allow_internet_access"`
		EgressProxy         json.RawMessage `json:"egressProxy"`
		Rules               json.RawMessage `json:"rules"`
	}
	if err := decodeJSON(w, r, &body, true); err != nil {
		return err
	}
	switch {
	case isSet(body.EgressProxy):
		return unsupported("egressProxy", "use sbx's egress policies")
	case isSet(body.Rules):
		return unsupported("rules", "use sbx's egress policies")
	}
	p, err := egressOf(body.AllowInternetAccess, &createNetwork{AllowOut: body.AllowOut, DenyOut: body.DenyOut})
	if err != nil {
		return err
	}
	if p == nil {
		p = &wire.EgressPolicy{Mode: wire.EgressAllowAll}
	}
	if _, err := s.sandboxes.SetEgress(r.Context(), id, *p); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// metricJSON is E2B's SandboxMetric.
type metricJSON struct {
	Timestamp     time.Time `json:"timestamp"`
	TimestampUnix int64     `json:"timestampUnix"`
	CPUCount      int       `json:"cpuCount"`
	CPUUsedPct    float64   `json:"cpuUsedPct"` // of all its CPUs
	MemUsed       uint64    `json:"memUsed"`
	MemTotal      uint64    `json:"memTotal"`
	DiskUsed      uint64    `json:"diskUsed"`
	DiskTotal     uint64    `json:"diskTotal"`
}

// metrics answers getMetrics with one sample: what the sandbox uses now
// (sbx keeps no history per sandbox; Prometheus at /metrics does). A
// start/end window (unix seconds) that excludes now answers none.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request, id string) error {
	if s.cfg.Usage == nil {
		return errdefs.NotFound(wire.CodeRouteNotFound, "sandbox metrics are not available on this daemon")
	}
	var from, to int64
	for name, v := range map[string]*int64{"start": &from, "end": &to} {
		if q := r.URL.Query().Get(name); q != "" {
			n, err := strconv.ParseInt(q, 10, 64)
			if err != nil {
				return errdefs.Invalid(wire.CodeInvalidParameter, "%s must be unix seconds, got %q", name, q)
			}
			*v = n
		}
	}
	sb, err := s.sandboxes.Get(r.Context(), id)
	if err != nil {
		return err
	}
	st := s.cfg.Usage.Stats(sb)
	out := []metricJSON{}
	if now := st.Time.Unix(); (from == 0 || now >= from) && (to == 0 || now <= to) {
		m := metricJSON{Timestamp: st.Time, TimestampUnix: now, CPUCount: max(1, int(sb.Spec.CPU+0.5)),
			MemUsed: st.MemoryBytes, MemTotal: st.MemoryLimitBytes, DiskUsed: st.DiskBytes, DiskTotal: st.DiskLimitBytes}
		if st.CPUPercent != nil {
			m.CPUUsedPct = *st.CPUPercent / float64(m.CPUCount)
		}
		out = append(out, m)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// templateAlias answers whether an alias names a template
// (Template.exists): the templates are sbx's (Config.Templates).
func (s *Server) templateAlias(w http.ResponseWriter, r *http.Request, alias string) error {
	if _, ok := s.cfg.Templates[alias]; !ok {
		return errdefs.NotFound(wire.CodeImageNotFound, "template %q not found: sbx knows %s", alias, strings.Join(s.templateNames(), ", "))
	}
	writeJSON(w, http.StatusOK, map[string]any{"templateID": alias, "public": true})
	return nil
}

func (s *Server) templateNames() []string {
	var names []string
	for k := range s.cfg.Templates {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func (s *Server) get(w http.ResponseWriter, r *http.Request, id string) error {
	sb, err := s.sandboxes.Get(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.toE2B(sb, auth.Principal{}, false))
	return nil
}

// list answers GET /v2/sandboxes (and /sandboxes): newest first, with
// E2B's metadata and state filters and X-Next-Token paging (the token is
// the offset).
func (s *Server) list(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := store.Filter{}
	if meta := q.Get("metadata"); meta != "" {
		vals, err := parseQuery(meta)
		if err != nil {
			return errdefs.Invalid(wire.CodeInvalidParameter, "metadata must be key=value pairs joined by &: %v", err)
		}
		f.Labels = map[string]string{}
		for k, v := range vals {
			f.Labels[labelMeta+k] = v
		}
	}
	all, err := s.sandboxes.List(r.Context(), f)
	if err != nil {
		return err
	}
	states := map[string]bool{}
	for _, st := range strings.Split(q.Get("state"), ",") {
		if st != "" {
			states[st] = true
		}
	}
	var out []sandboxJSON
	for _, sb := range all {
		e := s.toE2B(sb, auth.Principal{}, false)
		if sb.Spec.Labels[labelTemplate] == "" || sb.State == wire.StateDeleting || sb.State == wire.StateDeleted {
			continue // not made through E2B, or going away
		}
		if len(states) > 0 && !states[e.State] {
			continue
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].StartedAt.After(out[j].StartedAt) })
	return writePage(w, q, out)
}

// writePage answers one page of all: E2B's limit (default 100) and
// nextToken query, with X-Next-Token naming the next page (the token is
// the offset).
func writePage[T any](w http.ResponseWriter, q url.Values, all []T) error {
	offset, limit := 0, 100
	var err error
	if t := q.Get("nextToken"); t != "" {
		if offset, err = strconv.Atoi(t); err != nil || offset < 0 {
			return errdefs.Invalid(wire.CodeInvalidParameter, "nextToken %q is not a token this server gave out", t)
		}
	}
	if l := q.Get("limit"); l != "" {
		if limit, err = strconv.Atoi(l); err != nil || limit < 1 {
			return errdefs.Invalid(wire.CodeInvalidParameter, "limit must be a positive number, got %q", l)
		}
	}
	page := []T{}
	if offset < len(all) {
		page = all[offset:min(len(all), offset+limit)]
	}
	if offset+limit < len(all) {
		w.Header().Set("X-Next-Token", strconv.Itoa(offset+limit))
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// setTimeout sets the TTL to timeout seconds from now (E2B: the sandbox
// ends timeout seconds from now); for an autoPause sandbox it sets the idle
// pause time instead.
func (s *Server) setTimeout(w http.ResponseWriter, r *http.Request, id string) error {
	var body struct {
		Timeout int `json:"timeout"`
	}
	if err := decodeJSON(w, r, &body, true); err != nil {
		return err
	}
	if body.Timeout <= 0 {
		return errdefs.Invalid(wire.CodeInvalidParameter, "timeout must be a positive number of seconds, got %d", body.Timeout)
	}
	if err := s.extend(r, id, body.Timeout); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// extend makes the sandbox end seconds from now: its TTL, or for an
// autoPause sandbox its idle pause time.
func (s *Server) extend(r *http.Request, id string, seconds int) error {
	sb, err := s.sandboxes.Get(r.Context(), id)
	if err != nil {
		return err
	}
	req := wire.UpdateSandboxRequest{TTLSeconds: &seconds}
	if pol := sb.Spec.Policy; pol != nil && pol.AutoPauseSeconds > 0 && pol.TTLSeconds == 0 {
		req = wire.UpdateSandboxRequest{AutoPauseSeconds: &seconds}
	}
	_, err = s.sandboxes.Update(r.Context(), id, req)
	return err
}

// running reports whether E2B should see sb as running: started, or on
// its way there from creation. Archived, stopped, paused and failed
// sandboxes are "paused" (connect starts them).
func running(sb *store.Sandbox) bool {
	switch sb.State {
	case wire.StateCreating, wire.StateStarting, wire.StateStarted:
		return true
	}
	return false
}

// domain is the sandbox domain the SDK builds hosts with,
// {port}-{sandboxID}.{domain} (getHost): sbx's preview domain, or
// "localhost" without one, so that a host the SDK builds never names
// E2B's cloud.
func (s *Server) domain() *string {
	d := s.cfg.Domain
	if d == "" {
		d = "localhost"
	}
	return &d
}

// refresh extends the sandbox's life: it ends duration seconds from now
// (E2B's default and bound: 1 to 3600), as setTimeout does.
func (s *Server) refresh(w http.ResponseWriter, r *http.Request, id string) error {
	var body struct {
		Duration *int `json:"duration"`
	}
	if r.ContentLength != 0 {
		if err := decodeJSON(w, r, &body, true); err != nil {
			return err
		}
	}
	d := DefaultTimeoutSeconds
	if body.Duration != nil {
		d = *body.Duration
	}
	if d < 1 || d > 3600 {
		return errdefs.Invalid(wire.CodeInvalidParameter, "duration must be from 1 to 3600 seconds, got %d", d)
	}
	if err := s.extend(r, id, d); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// pause answers 409 when the sandbox is already paused (the SDK's false).
// betaPause's memory: false (a filesystem-only pause) is refused: sbx's
// pause keeps the memory.
func (s *Server) pause(w http.ResponseWriter, r *http.Request, id string) error {
	var body struct {
		Memory *bool `json:"memory"`
	}
	if r.ContentLength != 0 {
		if err := decodeJSON(w, r, &body, true); err != nil {
			return err
		}
	}
	if body.Memory != nil && !*body.Memory {
		return errdefs.Invalid(wire.CodeInvalidParameter, "memory: false (betaPause keepMemory: false) is not supported by sbx's E2B layer: a paused sandbox keeps its memory")
	}
	sb, err := s.sandboxes.Get(r.Context(), id)
	if err != nil {
		return err
	}
	if sb.State == wire.StatePaused {
		return errdefs.Conflict(wire.CodeInvalidState, "sandbox %s is already paused", id)
	}
	if _, err := s.sandboxes.Pause(r.Context(), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// connect resumes a paused sandbox (or starts a stopped one), optionally
// sets a new timeout, and answers with fresh access tokens.
func (s *Server) connect(w http.ResponseWriter, r *http.Request, id string, p auth.Principal) error {
	var body struct {
		Timeout *int  `json:"timeout"`
		Memory  *bool `json:"memory"` // false: resume from the filesystem alone
	}
	if r.ContentLength != 0 {
		if err := decodeJSON(w, r, &body, true); err != nil {
			return err
		}
	}
	if body.Memory != nil && !*body.Memory {
		return errdefs.Invalid(wire.CodeInvalidParameter, "memory: false (onResume: 'reboot') is not supported by sbx's E2B layer: a paused sandbox resumes with its memory; kill it and create a new one to reboot")
	}
	sb, err := s.sandboxes.Get(r.Context(), id)
	if err != nil {
		return err
	}
	status := http.StatusOK
	switch {
	case sb.State == wire.StatePaused:
		if sb, err = s.sandboxes.Resume(r.Context(), id); err != nil {
			return err
		}
		status = http.StatusCreated
	case !running(sb):
		// Stopped, archived, …: the Manager starts (or restores) it.
		if _, sb, err = s.sandboxes.Agent(r.Context(), id); err != nil {
			return err
		}
		status = http.StatusCreated
	}
	if body.Timeout != nil && *body.Timeout > 0 && (sb.Spec.Policy == nil || sb.Spec.Policy.TTLSeconds > 0) {
		if sb, err = s.sandboxes.Update(r.Context(), id, wire.UpdateSandboxRequest{TTLSeconds: body.Timeout}); err != nil {
			return err
		}
	}
	writeJSON(w, status, s.toE2B(sb, p, true))
	return nil
}

// toE2B describes sb as E2B does; withTokens adds the access tokens made
// for principal p.
func (s *Server) toE2B(sb *store.Sandbox, p auth.Principal, withTokens bool) sandboxJSON {
	out := sandboxJSON{
		SandboxID: sb.ID, TemplateID: sb.Spec.Labels[labelTemplate], Alias: sb.Spec.Labels[labelTemplate],
		ClientID: "sbx", EnvdVersion: EnvdVersion, StartedAt: sb.CreatedAt,
		CPUCount: max(1, int(sb.Spec.CPU+0.5)), MemoryMB: sb.Spec.MemoryMiB, DiskSizeMB: sb.Spec.DiskMiB,
		Metadata: map[string]string{}, State: "paused", Domain: s.domain(),
	}
	if !sb.StartedAt.IsZero() {
		out.StartedAt = sb.StartedAt
	}
	if running(sb) {
		out.State = "running"
	}
	for k, v := range sb.Spec.Labels {
		if m, ok := strings.CutPrefix(k, labelMeta); ok {
			out.Metadata[m] = v
		}
	}
	if pol := sb.Spec.Policy; pol != nil && pol.TTLSeconds > 0 {
		from := pol.TTLFrom
		if from.IsZero() {
			from = sb.CreatedAt
		}
		end := from.Add(time.Duration(pol.TTLSeconds) * time.Second)
		out.EndAt = &end
	} else if !sb.ExpiresAt.IsZero() {
		out.EndAt = &sb.ExpiresAt
	}
	if withTokens {
		out.EnvdAccessToken = s.accessToken(p, sb.ID)
		out.TrafficAccessToken = out.EnvdAccessToken
	}
	return out
}

// writeAPIError answers in E2B's error format with the status of err's kind.
func writeAPIError(w http.ResponseWriter, err error) {
	status, msg := errStatus(err)
	writeJSON(w, status, apiErrJSON{Code: status, Message: msg})
}

// errStatus is the HTTP status of err's kind and the message E2B shows.
func errStatus(err error) (int, string) {
	var e *errdefs.Error
	if !errors.As(err, &e) {
		e = &errdefs.Error{Kind: errdefs.KindInternal, Message: "internal error; see the daemon log"}
	}
	return httpjson.Status(e.Kind), e.Message
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	raw, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(raw, '\n'))
}

// decodeJSON decodes r's body into v; strict refuses a field v lacks.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any, strict bool) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, httpjson.MaxBody))
	if strict {
		dec.DisallowUnknownFields()
	}
	err := dec.Decode(v)
	if err == nil || errors.Is(err, io.EOF) {
		return nil
	}
	return errdefs.Invalid(wire.CodeInvalidJSON, "malformed JSON body: %v", err)
}

// parseQuery parses E2B's metadata filter "k1=v1&k2=v2".
func parseQuery(s string) (map[string]string, error) {
	vals, err := url.ParseQuery(s)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for k, v := range vals {
		out[k] = v[0]
	}
	return out, nil
}
