package e2b

import (
	"context"
	"io"
	"net/http"

	"github.com/sbxhq/sbx/internal/agentapi"
)

// box is the sandbox one request addresses: every agent call of the
// request goes to it.
type box struct {
	s  *Server
	id string
}

// sandboxHeader names the sandbox of an envd or code-interpreter request
// (E2B_SANDBOX_URL); serveSandbox sets it for requests that name their
// sandbox in the host instead.
const sandboxHeader = "E2b-Sandbox-Id"

// box is the sandbox of a request whose headers serveSandbox checked.
func (s *Server) box(h http.Header) box { return box{s, h.Get(sandboxHeader)} }

// callAgent sends in to route on b's agent (which the Manager starts or
// resumes if needed) and decodes the answer: the one way of calling the
// agent (internal/agentapi/call.go).
func callAgent[Out any](ctx context.Context, b box, route agentapi.Route, p agentapi.Params, in any) (Out, error) {
	client, _, err := b.s.sandboxes.Agent(ctx, b.id)
	if err != nil {
		var zero Out
		return zero, err
	}
	return agentapi.Call[Out](ctx, client, route, p, in)
}

// open sends body (nil for none) to route and returns the 2xx answer for the
// caller to read and close: a stream or a file.
func (b box) open(ctx context.Context, route agentapi.Route, p agentapi.Params, body io.Reader, contentType string) (*http.Response, error) {
	client, _, err := b.s.sandboxes.Agent(ctx, b.id)
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
