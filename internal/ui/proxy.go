package ui

import (
	"net/http"
	"strings"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/wire"
)

// apiPrefix is where the dashboard reaches the API: /ui/api/v1/... is
// /v1/... with the session's key.
const apiPrefix = "/ui/api"

// proxy hands a dashboard data call to the API server in-process, as if the
// browser had sent the session's key itself. Only /v1 is reachable this
// way. The browser's cookies and CSRF token are not passed on: a preview
// route forwards requests into a sandbox, whose code must never see them.
func (u *UI) proxy(w http.ResponseWriter, r *http.Request, sess *session, _ auth.Principal) {
	path := strings.TrimPrefix(r.URL.Path, apiPrefix)
	if !strings.HasPrefix(path, "/v1/") {
		httpjson.WriteError(w, errdefs.NotFound(wire.CodeRouteNotFound, "the dashboard reaches only /v1 through %s", apiPrefix))
		return
	}
	if isPreview(path) {
		httpjson.WriteError(w, errdefs.NotFound(wire.CodeRouteNotFound, "previews are not served through the dashboard: open the port's own URL"))
		return
	}
	in := r.Clone(r.Context())
	in.URL.Path = path
	in.URL.RawPath = strings.TrimPrefix(r.URL.RawPath, apiPrefix)
	in.RequestURI = in.URL.RequestURI()
	in.Header.Del("Cookie")
	in.Header.Del(CSRFHeader)
	in.Header.Set("Authorization", "Bearer "+sess.key)
	u.cfg.API.ServeHTTP(w, in)
}

// isPreview reports whether path is a preview's
// (/v1/sandboxes/{id}/ports/{port}/...): a sandbox's own pages must never be
// served under the dashboard's paths.
func isPreview(path string) bool {
	parts := strings.Split(path, "/") // "", "v1", "sandboxes", id, "ports", port, rest...
	return len(parts) > 6 && parts[2] == "sandboxes" && parts[4] == "ports"
}
