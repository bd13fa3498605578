package e2b

import (
	"context"
	"io"
	"net/http"

	"github.com/sbxhq/sbx/internal/agentapi"
)

// callAgent sends in to route on the agent of the context's sandbox (which the
// Manager starts or resumes if needed) and decodes the answer: the one way
// of calling the agent (internal/agentapi/call.go).
func callAgent[Out any](ctx context.Context, s *Server, route agentapi.Route, p agentapi.Params, in any) (Out, error) {
	client, _, err := s.sandboxes.Agent(ctx, sandboxOf(ctx))
	if err != nil {
		var zero Out
		return zero, err
	}
	return agentapi.Call[Out](ctx, client, route, p, in)
}

// open sends body (nil for none) to route and returns the 2xx answer for the
// caller to read and close: a stream or a file.
func (s *Server) open(ctx context.Context, route agentapi.Route, p agentapi.Params, body io.Reader, contentType string) (*http.Response, error) {
	client, _, err := s.sandboxes.Agent(ctx, sandboxOf(ctx))
	if err != nil {
		return nil, err
	}
	return agentapi.Open(ctx, client, route, p, body, contentType)
}

// query is the Params of a call with a query and no path parameters.
func query(kv ...string) agentapi.Params {
	q := make(map[string][]string, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		q[kv[i]] = append(q[kv[i]], kv[i+1])
	}
	return agentapi.Params{Query: q}
}

// at is the Params of a call on one path parameter.
func at(id string) agentapi.Params { return agentapi.Params{Path: []string{id}} }
