package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// Code contexts: a long-lived interpreter inside a sandbox whose globals,
// imports, functions and working directory persist from one run to the next,
// like a notebook kernel. A stateless Run starts a fresh interpreter instead.
//
// Languages with contexts: "python", "javascript" (node) and "bash". A
// stateless Run also takes "sh", "ruby" and "perl" (when the image has them).

// RunHandlers receive a streamed run as it happens. Nil fields discard.
type RunHandlers struct {
	Stdout func([]byte)
	Stderr func([]byte)
	Result func(CodeResult)
}

// CreateContext starts an interpreter in a started sandbox.
func (c *Client) CreateContext(ctx context.Context, idOrName string, req CreateContextRequest) (*Context, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	var out Context
	if err := c.call(ctx, request{method: http.MethodPost, path: sandboxPath(idOrName, "/contexts"), in: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListContexts lists a sandbox's live contexts, oldest first.
func (c *Client) ListContexts(ctx context.Context, idOrName string) ([]Context, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	var out []Context
	if err := c.call(ctx, request{method: http.MethodGet, path: sandboxPath(idOrName, "/contexts")}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// GetContext describes one context; a context whose interpreter is gone is
// not found (code CONTEXT_NOT_FOUND).
func (c *Client) GetContext(ctx context.Context, idOrName, contextID string) (*Context, error) {
	path, err := contextPath(idOrName, contextID, "")
	if err != nil {
		return nil, err
	}
	var out Context
	if err := c.call(ctx, request{method: http.MethodGet, path: path}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteContext ends a context's interpreter and everything it started.
func (c *Client) DeleteContext(ctx context.Context, idOrName, contextID string) error {
	path, err := contextPath(idOrName, contextID, "")
	if err != nil {
		return err
	}
	return c.call(ctx, request{method: http.MethodDelete, path: path}, nil)
}

// RunCode runs code in a context. With h nil it waits and returns the whole
// result. With h set the run is streamed: output and rich results go to the
// handlers as they come, and the returned result holds the results, the
// error and the timing but not stdout and stderr. Cancelling ctx interrupts
// the code. An exception in the code is RunResult.Error, not an error here;
// a context whose interpreter is gone gives an *APIError with code
// CONTEXT_NOT_FOUND.
func (c *Client) RunCode(ctx context.Context, idOrName, contextID string, req RunCodeRequest, h *RunHandlers) (*RunResult, error) {
	path, err := contextPath(idOrName, contextID, "/run")
	if err != nil {
		return nil, err
	}
	return c.run(ctx, path, req, h)
}

// Run runs code once in a fresh interpreter (nothing persists between runs).
// h works as in RunCode.
func (c *Client) Run(ctx context.Context, idOrName string, req RunRequest, h *RunHandlers) (*RunResult, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	return c.run(ctx, sandboxPath(idOrName, "/run"), req, h)
}

func (c *Client) run(ctx context.Context, path string, in any, h *RunHandlers) (*RunResult, error) {
	if h == nil {
		var res RunResult
		if err := c.call(ctx, request{method: http.MethodPost, path: path, in: in}, &res); err != nil {
			return nil, err
		}
		return &res, nil
	}
	resp, err := c.send(ctx, request{method: http.MethodPost, path: path, query: url.Values{"stream": {"true"}}, in: in})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	res := &RunResult{Results: []CodeResult{}}
	dec := json.NewDecoder(resp.Body)
	for {
		var ev RunEvent
		if err := dec.Decode(&ev); err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, ctxErr
			}
			if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, ErrStreamEnded
			}
			return nil, fmt.Errorf("decode run stream: %w", err)
		}
		switch ev.Type {
		case "stdout":
			if h.Stdout != nil {
				h.Stdout(ev.Data)
			}
		case "stderr":
			if h.Stderr != nil {
				h.Stderr(ev.Data)
			}
		case "result":
			if ev.Result != nil {
				res.Results = append(res.Results, *ev.Result)
				if h.Result != nil {
					h.Result(*ev.Result)
				}
			}
		case "error":
			if ev.Error == nil {
				return nil, &APIError{Code: CodeInternal, Message: "run failed without a message"}
			}
			if ev.Error.Code != "" || ev.Error.Name == "" {
				return nil, &APIError{Code: ev.Error.Code, Message: ev.Error.Message}
			}
			res.Error = ev.Error
		case "end":
			res.TimedOut, res.DurationMs = ev.TimedOut, ev.DurationMs
			return res, nil
		}
	}
}

// contextPath returns /v1/sandboxes/{id}/contexts/{cid}{suffix}.
func contextPath(idOrName, contextID, suffix string) (string, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return "", err
	}
	if err := checkName("context id", contextID); err != nil {
		return "", err
	}
	return sandboxPath(idOrName, "/contexts/"+url.PathEscape(contextID)+suffix), nil
}

// CreateContext is Client.CreateContext on this sandbox.
func (h *SandboxHandle) CreateContext(ctx context.Context, req CreateContextRequest) (*Context, error) {
	return h.c.CreateContext(ctx, h.idOrName, req)
}

// RunCode is Client.RunCode on this sandbox.
func (h *SandboxHandle) RunCode(ctx context.Context, contextID string, req RunCodeRequest, handlers *RunHandlers) (*RunResult, error) {
	return h.c.RunCode(ctx, h.idOrName, contextID, req, handlers)
}

// Run is Client.Run on this sandbox.
func (h *SandboxHandle) Run(ctx context.Context, req RunRequest, handlers *RunHandlers) (*RunResult, error) {
	return h.c.Run(ctx, h.idOrName, req, handlers)
}
