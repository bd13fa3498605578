package daytona

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/sdk"
)

// The toolbox reaches the sandbox's agent through the agent contract: the
// same routes (agentapi.Routes) the sbx API forwards to.

// maxAgentAnswer bounds a JSON answer read whole (a listing, a result).
const maxAgentAnswer = 64 << 20

// agentFor returns the agent of the request's sandbox, starting a stopped
// sandbox as sbx's own toolbox does.
func (h *Handler) agentFor(r *http.Request) (*agentapi.Client, *store.Sandbox, error) {
	return h.cfg.Sandboxes.Agent(r.Context(), r.PathValue("id"))
}

// call sends one request to the agent: in (if not nil) as the JSON body,
// the JSON answer into out (if not nil). A non-2xx answer is the agent's
// error, with its code.
func call(ctx context.Context, c *agentapi.Client, route agentapi.Route, path string, query url.Values, in, out any) error {
	req := agentapi.Request{Method: route.Method, Path: path, RawQuery: query.Encode()}
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return errdefs.Internal(err, "encode agent request")
		}
		req.Body, req.ContentLength, req.ContentType = bytes.NewReader(b), int64(len(b)), "application/json"
	}
	resp, err := c.Forward(ctx, req)
	if err != nil {
		return agentLost(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return agentapi.ResponseError(resp)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAgentAnswer+1))
	if err != nil {
		return agentLost(err)
	}
	if len(body) > maxAgentAnswer {
		return errdefs.Unavailable(sdk.CodeAgentResponseTooLarge, "the agent's answer to %s is larger than %d bytes", route.Pattern(), maxAgentAnswer)
	}
	if out != nil && len(body) > 0 {
		if err := json.Unmarshal(body, out); err != nil {
			return errdefs.Internal(err, "decode the agent's answer to %s", route.Pattern())
		}
	}
	return nil
}

// agentLost is the error of a toolbox call whose agent did not answer.
func agentLost(err error) error {
	if errdefs.CodeOf(err) == sdk.CodeAgentResponseTooLarge {
		return err
	}
	return &errdefs.Error{Kind: errdefs.KindUnavailable, Code: sdk.CodeSandboxUnavailable,
		Message: "the sandbox did not answer; it may be stopping or have crashed: check its state and retry", Err: err}
}
