package daytona

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/network"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Preview links: Daytona's getPreviewLink answers a URL and a token that
// goes in the X-Daytona-Preview-Token header. sbx exposes the port —
// private, so its token is needed, or public (no token) for a sandbox
// created public — and serves the link at /daytona/preview/{id}/{port}
// by handing the request to its own preview proxy with the token moved to
// sbx's header. A port of a public sandbox opens at its first link.

const daytonaTokenHeader = "X-Daytona-Preview-Token"

// maxSignedSeconds is the longest signed preview URL (network.MaxSignedTTL).
var maxSignedSeconds = int(network.MaxSignedTTL.Seconds())

func (h *Handler) exposed(r *http.Request) (*store.Sandbox, *store.Port, error) {
	if h.cfg.Previews == nil || h.cfg.API == nil {
		return nil, nil, errdefs.Unavailable(wire.CodeNetworkUnavailable, "previews are off on this daemon")
	}
	port, err := strconv.Atoi(r.PathValue("port"))
	if err != nil || port < 1 || port > 65535 {
		return nil, nil, invalid(wire.CodeInvalidPort, "port must be from 1 to 65535, got %q", r.PathValue("port"))
	}
	sb, err := h.cfg.Sandboxes.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return nil, nil, err
	}
	if sb.Spec.Network != wire.NetworkBridge {
		return nil, nil, errdefs.Conflict(wire.CodeNoNetwork, "sandbox %s has no network (networkBlockAll); preview links need one", sb.ID)
	}
	if sb.Spec.Labels[publicLabel] == "true" {
		rec, err := h.cfg.Previews.Expose(r.Context(), sb.ID, port, true)
		return sb, rec, err
	}
	rec, err := h.cfg.Previews.Link(r.Context(), sb.ID, port)
	return sb, rec, err
}

func previewURL(r *http.Request, id string, port int) string {
	return baseURL(r) + previewPrefix + "/" + id + "/" + strconv.Itoa(port)
}

// previewLink serves GET /sandbox/{id}/ports/{port}/preview-url.
func (h *Handler) previewLink(w http.ResponseWriter, r *http.Request) error {
	sb, rec, err := h.exposed(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"sandboxId": sb.ID, "url": previewURL(r, sb.ID, rec.Port), "token": rec.Token})
	return nil
}

// signedPreviewLink serves GET /sandbox/{id}/ports/{port}/signed-preview-url:
// a URL that works without a token until it expires.
func (h *Handler) signedPreviewLink(w http.ResponseWriter, r *http.Request) error {
	secs := 60
	if s := r.URL.Query().Get("expiresInSeconds"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxSignedSeconds {
			return invalid(wire.CodeInvalidExpiry, "expiresInSeconds must be from 1 to %d, got %q", maxSignedSeconds, s)
		}
		secs = n
	}
	sb, rec, err := h.exposed(r)
	if err != nil {
		return err
	}
	exp := time.Now().Add(time.Duration(secs) * time.Second).Truncate(time.Second)
	sig := h.cfg.Previews.Sign(rec, exp)
	q := url.Values{network.ExpiresParam: {strconv.FormatInt(exp.Unix(), 10)}, network.SigParam: {sig}}
	writeJSON(w, http.StatusOK, map[string]any{"sandboxId": sb.ID, "port": rec.Port, "token": sig,
		"url": previewURL(r, sb.ID, rec.Port) + "/?" + q.Encode()})
	return nil
}

// servePreview hands /daytona/preview/{id}/{port}/… to sbx's preview proxy
// (/v1/sandboxes/{id}/ports/{port}/…), which checks the token and proxies.
func (h *Handler) servePreview(w http.ResponseWriter, r *http.Request) error {
	if h.cfg.API == nil {
		return errdefs.Unavailable(wire.CodeNetworkUnavailable, "previews are off on this daemon")
	}
	id, port := r.PathValue("id"), r.PathValue("port")
	// Keep the rest of the path as the client escaped it.
	rest := strings.TrimPrefix(r.URL.EscapedPath(), previewPrefix+"/"+url.PathEscape(id)+"/"+port)
	if !strings.HasPrefix(rest, "/") {
		rest = "/" + rest
	}
	escaped := "/v1/sandboxes/" + url.PathEscape(id) + "/ports/" + port + rest
	plain, err := url.PathUnescape(escaped)
	if err != nil {
		return invalid(wire.CodeInvalidPath, "bad path escaping: %v", err)
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path, r2.URL.RawPath, r2.RequestURI = plain, escaped, ""
	if t := r.Header.Get(daytonaTokenHeader); t != "" {
		r2.Header.Set(network.TokenHeader, t)
		r2.Header.Del(daytonaTokenHeader)
	}
	h.cfg.API.ServeHTTP(w, r2)
	return nil
}

// expireSignedPreview serves POST …/ports/{port}/signed-preview-url/{token}/expire.
// sbx signs a port's previews with the port's token (network.Previews.Sign),
// so one signed URL cannot end alone: the port is exposed anew with a new
// token, which ends every signed URL and token of that port
// (docs/compat/daytona.md). A signature does not say until when it was
// made, so the token is not checked: whichever is named, all end.
func (h *Handler) expireSignedPreview(w http.ResponseWriter, r *http.Request) error {
	if h.cfg.Previews == nil || h.cfg.API == nil {
		return errdefs.Unavailable(wire.CodeNetworkUnavailable, "previews are off on this daemon")
	}
	port, err := strconv.Atoi(r.PathValue("port"))
	if err != nil || port < 1 || port > 65535 {
		return invalid(wire.CodeInvalidPort, "port must be from 1 to 65535, got %q", r.PathValue("port"))
	}
	sb, err := h.cfg.Sandboxes.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	rec, err := h.cfg.Previews.Get(r.Context(), sb.ID, port)
	if err != nil {
		return err
	}
	if rec.Public {
		return invalid(wire.CodeInvalidParameter, "port %d of sandbox %s is public: its previews need no token, so there is no signed URL to expire", port, r.PathValue("id"))
	}
	if _, err := h.native(r, "DELETE", "/v1/sandboxes/"+url.PathEscape(sb.ID)+"/ports/"+strconv.Itoa(port), nil, nil, ""); err != nil {
		return err
	}
	if _, err := h.cfg.Previews.Link(r.Context(), sb.ID, port); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}
