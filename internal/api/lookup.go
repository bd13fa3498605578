package api

import (
	"context"
	"net/http"
	"reflect"
	"strings"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Lookups never start an instance. A route marked lookup in the route
// table reads what the running instance holds (its processes, sessions,
// terminals, contexts): it answers from what runs, without starting,
// resuming or waiting for the sandbox, and it is not activity. On a sandbox
// without an instance a list is empty and a get is 404
// NOT_IN_CURRENT_INSTANCE; a paused sandbox answers 409 SANDBOX_PAUSED.
// Every other toolbox route starts (or resumes) the sandbox it needs: the
// OpenAPI document marks those with x-starts-instance.
//
// Routes marked onlyRunning read what lives longer than an instance but can
// be read only through one: the sandbox's files (read, list, stat, tar,
// watch) and its servers (GET of a preview path). They never start a
// stopped sandbox nor resume a paused one: without a running instance they
// answer 409 with a code naming the state (SANDBOX_NOT_RUNNING for stopped,
// error and archived, SANDBOX_PAUSED), and they count as activity only
// while the sandbox runs. Reading a stopped sandbox's files straight from
// its layers on the host is not done: it would be a second file
// implementation resolving paths of a hostile tree on the host, and an
// archived sandbox has no files on the host at all; a caller that wants
// them starts the sandbox.

// instanceRule is what a route that never starts an instance answers
// without one.
type instanceRule int

const (
	ruleStarts      instanceRule = iota // starts (or resumes) the sandbox it needs
	ruleLookup                          // [] or 404 NOT_IN_CURRENT_INSTANCE
	ruleOnlyRunning                     // 409 SANDBOX_NOT_RUNNING / SANDBOX_PAUSED
)

// ruleOf is rt's instance rule, from its row of the route table.
func ruleOf(rt route) instanceRule {
	switch {
	case rt.onlyRunning:
		return ruleOnlyRunning
	case rt.lookup:
		return ruleLookup
	}
	return ruleStarts
}

// instanceRule is the rule of the route that matched r: read from the
// route table by the mux's pattern, so no handler can be reached without
// it (a request the mux did not route starts nothing it may not).
func (s *Server) instanceRule(r *http.Request) instanceRule {
	return s.rules[r.Pattern]
}

// withInstanceRule returns rt's handler; a lookup's reaches the agent only
// if an instance runs, and a list answers [] when none does; one that
// starts an instance may first create its sandbox (touch.go).
func (s *Server) withInstanceRule(rt route) handler {
	if startsInstance(rt) && !rt.public {
		return s.createdOnTouch(rt.handler) // touch.go
	}
	if rt.onlyRunning {
		return s.onlyWhileRunning(rt)
	}
	if !rt.lookup {
		return rt.handler
	}
	list := rt.response != nil && reflect.TypeOf(rt.response).Kind() == reflect.Slice
	return func(w http.ResponseWriter, r *http.Request) error {
		err := rt.handler(w, r)
		if list && errdefs.CodeOf(err) == wire.CodeNotInCurrentInstance {
			writeJSON(w, http.StatusOK, []struct{}{})
			return nil
		}
		return err
	}
}

// agentFor returns the agent of the request's sandbox: for a lookup only a
// running one, for anything else starting the sandbox if need be.
func (s *Server) agentFor(r *http.Request) (*agentapi.Client, *store.Sandbox, error) {
	switch s.instanceRule(r) {
	case ruleLookup:
		return s.sandboxes.AgentIfRunning(r.Context(), r.PathValue("id"))
	case ruleOnlyRunning:
		return s.runningAgent(r.Context(), r.PathValue("id"))
	}
	return s.sandboxes.Agent(r.Context(), r.PathValue("id"))
}

// onlyWhileRunning returns the handler of an onlyRunning route: refused
// without a running instance, activity while it runs (previews hold their
// sandbox themselves, as configured).
func (s *Server) onlyWhileRunning(rt route) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		if rt.public {
			return rt.handler(w, r)
		}
		if _, _, err := s.runningAgent(r.Context(), r.PathValue("id")); err != nil {
			return err
		}
		release := s.sandboxes.Hold(r.Context(), r.PathValue("id"))
		defer release()
		return rt.handler(w, r)
	}
}

// onlyRunning reports whether r came through an onlyRunning route.
func (s *Server) onlyRunning(r *http.Request) bool {
	return s.instanceRule(r) == ruleOnlyRunning
}

// runningAgent is AgentIfRunning for an onlyRunning route: a sandbox
// without an instance is a conflict naming its state, not a missing
// resource.
func (s *Server) runningAgent(ctx context.Context, idOrName string) (*agentapi.Client, *store.Sandbox, error) {
	client, sb, err := s.sandboxes.AgentIfRunning(ctx, idOrName)
	if errdefs.CodeOf(err) == wire.CodeNotInCurrentInstance && sb != nil {
		err = sandbox.ErrNotRunning(sb)
	}
	return client, sb, err
}

// startsInstance reports whether rt starts (or resumes) a stopped (or
// paused) sandbox to answer: every toolbox route but the lookups, and the
// preview routes.
func startsInstance(rt route) bool {
	rest, ok := strings.CutPrefix(rt.pattern, "/v1/sandboxes/{id}")
	if !ok || rt.lookup || rt.onlyRunning {
		return false
	}
	if _, toolbox := agentapi.Lookup(rt.method, rest); toolbox {
		return true
	}
	return strings.HasPrefix(rest, "/ports/{port}/{path...}")
}
