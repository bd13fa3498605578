package api

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/network"
	"github.com/sbxhq/sbx/wire"
)

// The desktop's routes are the agent's (proxied like every toolbox route),
// except the view: the noVNC page the agent serves on wire.DesktopNoVNCPort,
// reached through the preview proxy like any exposed port, so it has the
// same access rules (private: the API key, the port's token, or a signed
// URL; or public).

var desktopScreenshotQ = []param{
	{"format", "string", "png or jpeg (default png)"},
	{"quality", "integer", "jpeg quality, 1 to 100 (default 80)"},
	{"cursor", "boolean", "draw the pointer"},
	{"x", "integer", "region: left edge"},
	{"y", "integer", "region: top edge"},
	{"width", "integer", "region: width (with x, y, height)"},
	{"height", "integer", "region: height"},
}

// desktopCodes are the codes of the agent's desktop routes.
func desktopCodes(agentPath string) []wire.Code {
	switch agentPath {
	case "/desktop/start":
		return []wire.Code{wire.CodeInvalidScreenSize, wire.CodeDesktopRunning, wire.CodeDesktopUnavailable, wire.CodeShuttingDown}
	case "/desktop/stop", "/desktop/status":
		return nil
	case "/desktop/launch":
		return append([]wire.Code{wire.CodeDesktopNotRunning}, codesExec...)
	case "/desktop/windows/{window}/focus":
		return []wire.Code{wire.CodeDesktopNotRunning, wire.CodeDesktopUnavailable, wire.CodeWindowNotFound}
	case "/desktop/keyboard/press":
		return []wire.Code{wire.CodeDesktopNotRunning, wire.CodeDesktopUnavailable, wire.CodeUnknownKey}
	}
	return []wire.Code{wire.CodeDesktopNotRunning, wire.CodeDesktopUnavailable, wire.CodeInvalidDesktopInput, wire.CodeOffScreen}
}

// desktopView exposes the noVNC port and answers the page's URL. The URL
// tells noVNC to connect at once, and carries the credential for its
// WebSocket too (an embedding page may block the access cookie as a
// third-party cookie). It needs host-based previews (--preview-domain): a
// path-based preview page runs in a sandboxed, opaque origin (CSP
// sandbox), where noVNC's module scripts and settings storage fail.
func (s *Server) desktopView(w http.ResponseWriter, r *http.Request) error {
	pv, err := s.previews()
	if err != nil {
		return err
	}
	var req wire.DesktopViewRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	ttl := time.Duration(req.ExpiresInSeconds) * time.Second
	if req.ExpiresInSeconds < 0 || ttl > network.MaxSignedTTL || (req.Public && ttl > 0) {
		return errdefs.Invalid(wire.CodeInvalidExpiry, "expiresInSeconds must be from 1 to %d, and only for a private view", int(network.MaxSignedTTL.Seconds()))
	}
	sb, err := s.sandboxes.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	if pv.HostURL(sb.ID, wire.DesktopNoVNCPort) == "" {
		return errdefs.Conflict(wire.CodePreviewDomainRequired, "the desktop view needs host-based previews: start the daemon with --preview-domain (a wildcard domain pointing at it); or expose port %d and use a VNC client through the preview", wire.DesktopNoVNCPort)
	}
	if sb.Spec.Network != wire.NetworkBridge {
		return errdefs.Conflict(wire.CodeNoNetwork, "sandbox %s has network %q; the desktop view needs a bridge sandbox", r.PathValue("id"), sb.Spec.Network)
	}
	rec, err := pv.Expose(r.Context(), sb.ID, wire.DesktopNoVNCPort, req.Public)
	if err != nil {
		return err
	}
	view := wire.DesktopView{Port: s.portToAPI(r, *rec)}
	cred := url.Values{}
	switch {
	case req.Public:
	case ttl > 0:
		exp := time.Now().Add(ttl).Truncate(time.Second)
		cred.Set(network.ExpiresParam, strconv.FormatInt(exp.Unix(), 10))
		cred.Set(network.SigParam, pv.Sign(rec, exp))
		utc := exp.UTC()
		view.ExpiresAt = &utc
	default:
		cred.Set(network.TokenParam, rec.Token)
	}
	base := view.Port.HostURL
	ws := "websockify"
	if len(cred) > 0 {
		ws += "?" + cred.Encode()
	}
	q := url.Values{"autoconnect": {"1"}, "resize": {"scale"}, "reconnect": {"1"}, "path": {ws}}
	for k, v := range cred {
		q[k] = v
	}
	view.URL = base + "vnc.html?" + q.Encode()
	writeJSON(w, http.StatusOK, view)
	return nil
}
