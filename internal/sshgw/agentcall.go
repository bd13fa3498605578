package sshgw

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/sdk"
)

// call sends one request of the agent contract: in (if not nil) as the
// JSON body, the answer decoded into out (if not nil). A status other than
// 2xx is the agent's error.
func call(ctx context.Context, a *agentapi.Client, rt agentapi.Route, path string, q url.Values, in, out any) error {
	req := agentapi.Request{Method: rt.Method, Path: path, RawQuery: q.Encode()}
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return errdefs.Internal(err, "encode agent request")
		}
		req.Body, req.ContentLength, req.ContentType = bytes.NewReader(b), int64(len(b)), "application/json"
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, agentapi.CallTimeout)
		defer cancel()
	}
	return send(ctx, a, req, out)
}

// send forwards req and decodes a JSON answer into out. A body may
// stream: it has no deadline but ctx's.
func send(ctx context.Context, a *agentapi.Client, req agentapi.Request, out any) error {
	resp, err := a.Forward(ctx, req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, agentapi.MaxAnswer))
	if err != nil {
		return errdefs.Unavailable(sdk.CodeAgentUnavailable, "read the agent's answer: %v", err)
	}
	if resp.StatusCode/100 != 2 {
		return agentError(resp.StatusCode, body)
	}
	if out != nil && resp.StatusCode != http.StatusNoContent {
		if err := json.Unmarshal(body, out); err != nil {
			return errdefs.Internal(err, "decode the agent's answer")
		}
	}
	return nil
}

// agentError rebuilds the error behind an agent's error answer.
func agentError(status int, body []byte) error {
	var er sdk.ErrorResponse
	if json.Unmarshal(body, &er) != nil || er.Error.Code == "" {
		er.Error = sdk.ErrorBody{Code: sdk.CodeAgentError, Message: fmt.Sprintf("agent answered %d: %.200s", status, body)}
	}
	return &errdefs.Error{Kind: httpjson.KindOf(status), Code: er.Error.Code, Message: er.Error.Message}
}
