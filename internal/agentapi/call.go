package agentapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Expand is the route's path with its "{name}" parameters replaced, in
// order, by params (each path-escaped, so a hostile id cannot add a
// segment). A count that does not match the pattern is a programming error.
func (r Route) Expand(params ...string) string {
	var b strings.Builder
	rest, used := r.Path, 0
	for {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			break
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 || used == len(params) {
			panic(fmt.Sprintf("agentapi: %s takes more parameters than the %d given", r.Pattern(), len(params)))
		}
		b.WriteString(rest[:open])
		b.WriteString(url.PathEscape(params[used]))
		used++
		rest = rest[open+end+1:]
	}
	if used != len(params) {
		panic(fmt.Sprintf("agentapi: %s takes %d parameters, given %d", r.Pattern(), used, len(params)))
	}
	b.WriteString(rest)
	return b.String()
}

// answerLimits are the routes whose whole JSON answer may be larger than
// MaxAnswer; every other route's answer is bounded by MaxAnswer.
var answerLimits = map[Route]int64{
	ListFiles:     16 << 20,
	Grep:          16 << 20, // MaxGrepMatches lines
	Glob:          16 << 20, // MaxGlobFiles names
	GitLog:        16 << 20,
	ListProcesses: 4 << 20,
	Run:           16 << 20, // rich results (images) of a whole run
	RunContext:    16 << 20,
	SessionExec:   16 << 20,
	Exec:          16 << 20,
}

// AnswerLimit is how many bytes of a JSON answer on r Call reads.
func (r Route) AnswerLimit() int64 {
	if n, ok := answerLimits[r]; ok {
		return n
	}
	return MaxAnswer
}

// Params are the path parameters and query of one call.
type Params struct {
	Path  []string   // "{name}" values, in order
	Query url.Values // nil for none
}

// Call sends in to route as JSON (no body when in is nil) and decodes a 2xx
// answer into an Out. A non-2xx answer is the agent's error, rebuilt; an
// answer larger than the route's AnswerLimit is refused, never truncated.
// Without a deadline in ctx the call gets CallTimeout.
func Call[Out any](ctx context.Context, c *Client, route Route, p Params, in any) (Out, error) {
	var out Out
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, CallTimeout)
		defer cancel()
	}
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return out, errdefs.Internal(err, "encode the request to %s", route.Pattern())
		}
		body = bytes.NewReader(raw)
	}
	resp, err := Open(ctx, c, route, p, body, "application/json")
	if err != nil {
		return out, err
	}
	defer resp.Body.Close()
	limit := route.AnswerLimit()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return out, &errdefs.Error{Kind: errdefs.KindUnavailable, Code: wire.CodeAgentUnavailable, Message: "read agent response", Err: err}
	}
	if int64(len(raw)) > limit {
		return out, errdefs.Unavailable(wire.CodeAgentResponseTooLarge, "the agent's answer to %s is larger than %d bytes", route.Pattern(), limit)
	}
	if resp.StatusCode == http.StatusNoContent || len(raw) == 0 {
		return out, nil
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, errdefs.Internal(err, "decode the agent's answer to %s", route.Pattern())
	}
	return out, nil
}

// None is the Out of a call whose answer carries nothing the caller needs.
type None struct{}

// Open sends body (nil for none; its length unknown) to route and returns a
// 2xx answer for the caller to read and close: a file, a stream, a tar. Any
// other answer is returned as the agent's error. It has no deadline but
// ctx's.
func Open(ctx context.Context, c *Client, route Route, p Params, body io.Reader, contentType string) (*http.Response, error) {
	req := Request{Method: route.Method, Path: route.Expand(p.Path...), RawQuery: p.Query.Encode(), Body: body, ContentLength: -1}
	if body != nil {
		req.ContentType = contentType
		if r, ok := body.(interface{ Len() int }); ok {
			req.ContentLength = int64(r.Len())
		}
	}
	resp, err := c.Forward(ctx, req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, ResponseError(resp)
	}
	return resp, nil
}

// WebSocketURL is the address of a WebSocket route (AttachPTY) for a
// dialer whose HTTP client uses the Client's Transport.
func WebSocketURL(route Route, p Params) string {
	return "ws" + strings.TrimPrefix(agentURL(route.Expand(p.Path...), p.Query.Encode()), "http")
}
