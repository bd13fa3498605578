package daytona

import (
	"context"
	"math"
	"net/http"
	"net/url"
	"strconv"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/sshgw"
	"github.com/sbxhq/sbx/wire"
)

// A sandbox's settings after create, on sbx's own routes (native.go):
// network settings are its egress policy, the latest metrics its stats,
// SSH access the SSH gateway's tokens.

// updateNetworkSettings serves POST /sandbox/{id}/network-settings: the
// fields given replace those of the egress policy, the rest stay.
func (h *Handler) updateNetworkSettings(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		NetworkBlockAll  *bool   `json:"networkBlockAll"`
		NetworkAllowList *string `json:"networkAllowList"`
		DomainAllowList  *string `json:"domainAllowList"`
	}
	if err := decodeStrict(w, r, &in); err != nil {
		return err
	}
	sb, err := h.cfg.Sandboxes.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	p := wire.EgressPolicy{Mode: wire.EgressAllowAll}
	if e := sb.Spec.Egress; e != nil {
		p = wire.EgressPolicy{Mode: e.Mode, CIDRs: e.CIDRs, Domains: e.Domains, HTTP: e.HTTP}
	}
	block := p.Mode == wire.EgressBlockAll
	if in.NetworkBlockAll != nil {
		block = *in.NetworkBlockAll
	}
	if in.NetworkAllowList != nil {
		p.CIDRs = splitList(*in.NetworkAllowList)
	}
	if in.DomainAllowList != nil {
		p.Domains = splitList(*in.DomainAllowList)
	}
	switch {
	case block:
		p.Mode = wire.EgressBlockAll
	case len(p.CIDRs)+len(p.Domains) > 0:
		p.Mode = wire.EgressAllowList
	default:
		p.Mode = wire.EgressAllowAll
	}
	if p.Mode != wire.EgressAllowList {
		p.CIDRs, p.Domains = nil, nil
	}
	if err := h.nativeJSON(r, "PUT", "/v1/sandboxes/"+url.PathEscape(sb.ID)+"/egress", nil, p, nil); err != nil {
		return err
	}
	if sb, err = h.cfg.Sandboxes.Get(r.Context(), sb.ID); err != nil {
		return err
	}
	return h.sendSandbox(w, r, http.StatusOK, sb)
}

// systemMetrics serves the toolbox's GET /system/metrics (getMetricsLatest)
// from sbx's stats: bytes, and CPU in cores and percent of them.
func (h *Handler) systemMetrics(w http.ResponseWriter, r *http.Request) error {
	sb, err := h.cfg.Sandboxes.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	var st wire.SandboxStats
	if err := h.nativeJSON(r, "GET", "/v1/sandboxes/"+url.PathEscape(sb.ID)+"/stats", nil, nil, &st); err != nil {
		return err
	}
	cpus := math.Ceil(sb.Spec.CPU)
	pct := 0.0
	if st.CPUPercent != nil && cpus > 0 {
		pct = *st.CPUPercent / cpus
	}
	diskTotal := st.DiskLimitBytes
	writeJSON(w, http.StatusOK, map[string]any{
		"cpuCount": cpus, "cpuUsedPct": pct,
		"memTotal": st.MemoryLimitBytes, "memUsed": st.MemoryBytes, "memCache": 0,
		"diskTotal": diskTotal, "diskUsed": st.DiskBytes, "diskFree": diskTotal - min(diskTotal, st.DiskBytes),
		"timestamp": stamp(st.Time), "timestampUnix": st.Time.Unix(),
	})
	return nil
}

// sshAccessDTO is Daytona's SshAccessDto.
type sshAccessDTO struct {
	ID         string `json:"id"`
	SandboxID  string `json:"sandboxId"`
	Token      string `json:"token"`
	ExpiresAt  string `json:"expiresAt"`
	CreatedAt  string `json:"createdAt"`
	UpdatedAt  string `json:"updatedAt"`
	SSHCommand string `json:"sshCommand"`
}

// createSSHAccess serves POST /sandbox/{id}/ssh-access?expiresInMinutes.
func (h *Handler) createSSHAccess(w http.ResponseWriter, r *http.Request) error {
	req := wire.CreateSSHAccessRequest{}
	if s := r.URL.Query().Get("expiresInMinutes"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 {
			return invalid(wire.CodeInvalidParameter, "expiresInMinutes must be a whole number of minutes from 1, got %q", s)
		}
		req.ExpiresInSeconds = n * 60
	}
	var a wire.SSHAccess
	if err := h.nativeJSON(r, "POST", "/v1/sandboxes/"+url.PathEscape(r.PathValue("id"))+"/ssh-access", nil, req, &a); err != nil {
		return err
	}
	out := sshAccessDTO{ID: a.ID, SandboxID: a.SandboxID, Token: a.Token, CreatedAt: stamp(a.CreatedAt),
		UpdatedAt: stamp(a.CreatedAt), SSHCommand: a.Command}
	if a.ExpiresAt != nil {
		out.ExpiresAt = stamp(*a.ExpiresAt)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// grant is the access a token grants, if the caller sees its sandbox.
func (h *Handler) grant(ctx context.Context, token string) (sshgw.Grant, bool) {
	if h.cfg.SSH == nil {
		return sshgw.Grant{}, false
	}
	a := h.cfg.SSH()
	if a == nil {
		return sshgw.Grant{}, false
	}
	g, err := a.CheckToken(ctx, token)
	if err != nil {
		return sshgw.Grant{}, false
	}
	if _, err := h.cfg.Sandboxes.Get(ctx, g.SandboxID); err != nil {
		return sshgw.Grant{}, false
	}
	return g, true
}

// revokeSSHAccess serves DELETE /sandbox/{id}/ssh-access?token: that
// token's access, or without one every access of the sandbox.
func (h *Handler) revokeSSHAccess(w http.ResponseWriter, r *http.Request) error {
	sb, err := h.cfg.Sandboxes.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	base := "/v1/sandboxes/" + url.PathEscape(sb.ID) + "/ssh-access"
	var ids []string
	if token := r.URL.Query().Get("token"); token != "" {
		g, ok := h.grant(r.Context(), token)
		if !ok || g.SandboxID != sb.ID {
			return errdefs.NotFound(wire.CodeSSHAccessNotFound, "no SSH access of sandbox %s has this token (revoked, expired or never made)", sb.ID)
		}
		ids = []string{g.AccessID}
	} else {
		var list []wire.SSHAccess
		if err := h.nativeJSON(r, "GET", base, nil, nil, &list); err != nil {
			return err
		}
		for _, a := range list {
			ids = append(ids, a.ID)
		}
	}
	for _, id := range ids {
		if _, err := h.native(r, "DELETE", base+"/"+url.PathEscape(id), nil, nil, ""); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, toDTO(sb, toolboxURL(r)))
	return nil
}

// validateSSHAccess serves GET /sandbox/ssh-access/validate?token.
func (h *Handler) validateSSHAccess(w http.ResponseWriter, r *http.Request) error {
	g, ok := h.grant(r.Context(), r.URL.Query().Get("token"))
	writeJSON(w, http.StatusOK, map[string]any{"valid": ok, "sandboxId": g.SandboxID})
	return nil
}
