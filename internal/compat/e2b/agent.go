package e2b

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/sdk"
)

// agentCall is one request to a sandbox's agent through the Manager (which
// starts or resumes the sandbox if needed).
type agentCall struct {
	method, path string
	query        url.Values
	body         any    // JSON-encoded unless it is an io.Reader
	contentType  string // of a raw body
}

// do sends c to the agent of the context's sandbox and returns the response
// of a 2xx answer; any other answer is returned as the agent's error.
func (s *Server) do(ctx context.Context, c agentCall) (*http.Response, error) {
	client, _, err := s.sandboxes.Agent(ctx, sandboxOf(ctx))
	if err != nil {
		return nil, err
	}
	req := agentapi.Request{Method: c.method, Path: c.path, RawQuery: c.query.Encode(), ContentLength: -1}
	switch b := c.body.(type) {
	case nil:
		req.ContentLength = 0
	case io.Reader:
		req.Body, req.ContentType = b, c.contentType
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			return nil, errdefs.Internal(err, "encode agent request")
		}
		req.Body, req.ContentType, req.ContentLength = bytes.NewReader(raw), "application/json", int64(len(raw))
	}
	resp, err := client.Forward(ctx, req)
	if err != nil {
		return nil, errdefs.Unavailable(sdk.CodeSandboxUnavailable, "the sandbox's agent did not answer: %v", err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, agentError(resp)
	}
	return resp, nil
}

// doJSON sends c and decodes a JSON answer into out (nil: discard it).
func (s *Server) doJSON(ctx context.Context, c agentCall, out any) error {
	resp, err := s.do(ctx, c)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return errdefs.Internal(err, "decode the agent's answer to %s %s", c.method, c.path)
	}
	return nil
}

// agentError turns an agent's error answer back into an errdefs error.
func agentError(resp *http.Response) error {
	var body sdk.ErrorResponse
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(raw, &body) != nil || body.Error.Code == "" {
		return errdefs.Internal(nil, "agent answered %d: %.200s", resp.StatusCode, raw)
	}
	return &errdefs.Error{Kind: httpjson.KindOf(resp.StatusCode), Code: body.Error.Code, Message: body.Error.Message}
}
