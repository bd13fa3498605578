package api

import (
	"context"
	"net/http"
	"reflect"
	"strings"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/sdk"
)

// Lookups never start an instance. A route marked lookup in the route
// table reads what the running instance holds (its processes, sessions,
// terminals, contexts): it answers from what runs, without starting,
// resuming or waiting for the sandbox, and it is not activity. On a sandbox
// without an instance a list is empty and a get is 404
// NOT_IN_CURRENT_INSTANCE; a paused sandbox answers 409 SANDBOX_PAUSED.
// Every other toolbox route starts (or resumes) the sandbox it needs: the
// OpenAPI document marks those with x-starts-instance.

// lookupKey marks the context of a lookup route's request.
type lookupKey struct{}

// withInstanceRule returns rt's handler; a lookup's reaches the agent only
// if an instance runs, and a list answers [] when none does; one that
// starts an instance may first create its sandbox (touch.go).
func (s *Server) withInstanceRule(rt route) handler {
	if startsInstance(rt) && !rt.public {
		return s.createdOnTouch(rt.handler) // touch.go
	}
	if !rt.lookup {
		return rt.handler
	}
	list := rt.response != nil && reflect.TypeOf(rt.response).Kind() == reflect.Slice
	return func(w http.ResponseWriter, r *http.Request) error {
		err := rt.handler(w, r.WithContext(context.WithValue(r.Context(), lookupKey{}, true)))
		if list && errdefs.CodeOf(err) == sdk.CodeNotInCurrentInstance {
			writeJSON(w, http.StatusOK, []struct{}{})
			return nil
		}
		return err
	}
}

// agentFor returns the agent of the request's sandbox: for a lookup only a
// running one, for anything else starting the sandbox if need be.
func (s *Server) agentFor(r *http.Request) (*agentapi.Client, *store.Sandbox, error) {
	if r.Context().Value(lookupKey{}) != nil {
		return s.sandboxes.AgentIfRunning(r.Context(), r.PathValue("id"))
	}
	return s.sandboxes.Agent(r.Context(), r.PathValue("id"))
}

// startsInstance reports whether rt starts (or resumes) a stopped (or
// paused) sandbox to answer: every toolbox route but the lookups, and the
// preview routes.
func startsInstance(rt route) bool {
	rest, ok := strings.CutPrefix(rt.pattern, "/v1/sandboxes/{id}")
	if !ok || rt.lookup {
		return false
	}
	if _, toolbox := agentapi.Lookup(rt.method, rest); toolbox {
		return true
	}
	return strings.HasPrefix(rest, "/ports/{port}/{path...}")
}
