package daytona

import (
	"net/http"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/store"
)

// The toolbox reaches the sandbox's agent through the agent contract: the
// same routes (agentapi.Routes) the sbx API forwards to, called with
// agentapi.Call (JSON) and agentapi.Open (streams).

// agentFor returns the agent of the request's sandbox, starting a stopped
// sandbox as sbx's own toolbox does.
func (h *Handler) agentFor(r *http.Request) (*agentapi.Client, *store.Sandbox, error) {
	return h.cfg.Sandboxes.Agent(r.Context(), r.PathValue("id"))
}

// none is the answer of a call whose body the layer does not need.
type none = agentapi.None

// query is a call's query parameters.
func query(q map[string][]string) agentapi.Params { return agentapi.Params{Query: q} }

// at is a call's path parameters.
func at(path ...string) agentapi.Params { return agentapi.Params{Path: path} }

// agentCall sends one JSON request to the agent of the request's sandbox.
func agentCall[Out any](h *Handler, r *http.Request, route agentapi.Route, in any) (Out, error) {
	c, _, err := h.agentFor(r)
	if err != nil {
		var zero Out
		return zero, err
	}
	return agentapi.Call[Out](r.Context(), c, route, agentapi.Params{}, in)
}
