package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Creation on first touch: with it on, a toolbox call that starts an
// instance (x-starts-instance) on a NAME no sandbox has creates that
// sandbox with the daemon's defaults first, once however many calls touch
// it at the same time (Manager.Ensure, as PUT /v1/sandboxes/{name}). It is
// off unless the daemon runs with --create-on-touch or the request says
// "X-Sbx-Create-If-Missing: true"; off, an unknown name is 404. Ids
// (sbx-…) are never created, nor is anything by a lookup or a preview.
//
// Caveat: a name taken from user input creates whatever sandbox it names.
// A front end that maps its users onto names must scope them (prefix the
// user's or tenant's id) so that one user cannot create, or reach, another's.

// CreateIfMissingHeader asks for creation on first touch per request.
const CreateIfMissingHeader = "X-Sbx-Create-If-Missing"

// SetCreateOnTouch turns creation on first touch on for every request.
func (s *Server) SetCreateOnTouch(on bool) { s.createOnTouch = on }

// createdOnTouch wraps the handler of a route that starts an instance.
func (s *Server) createdOnTouch(next handler) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		on := s.createOnTouch
		if v := r.Header.Get(CreateIfMissingHeader); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return errdefs.Invalid(wire.CodeInvalidParameter, "header %s must be true or false, got %q", CreateIfMissingHeader, v)
			}
			on = on || b
		}
		name := r.PathValue("id")
		if on && !strings.HasPrefix(name, "sbx-") {
			// One still being created by another first touch: Ensure waits
			// for that creation (it holds the name) instead of answering busy.
			sb, err := s.sandboxes.Get(r.Context(), name)
			missing := errdefs.CodeOf(err) == wire.CodeSandboxNotFound
			// Creating is a write whatever route it rides on: an exec-only
			// key gets the 404 it would get without creation on touch.
			if p, _ := auth.FromContext(r.Context()); missing && !authz.Allowed(p, auth.ScopeSandboxesWrite) {
				return authz.MissingScope(auth.ScopeSandboxesWrite)
			}
			if missing || err == nil && sb.State == wire.StateCreating {
				if _, _, err := s.sandboxes.Ensure(r.Context(), name, wire.CreateSandboxRequest{}); err != nil {
					return err
				}
				// The request's hold (server.go) found no sandbox to hold:
				// hold the new one, so a long stream keeps it from idling.
				defer s.sandboxes.Hold(r.Context(), name)()
			}
		}
		return next(w, r)
	}
}
