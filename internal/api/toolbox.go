package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// agents reaches a sandbox's agent, starting the sandbox if it is stopped.
type agents interface {
	Agent(ctx context.Context, idOrName string) (*agentapi.Client, *store.Sandbox, error)
	AgentIfRunning(ctx context.Context, idOrName string) (*agentapi.Client, *store.Sandbox, error) // lookup.go
	InstanceEnd(ctx context.Context, id string, wait time.Duration) (wire.State, string)           // stream.go
}

// The toolbox: the API serves every agent route (agentapi.Routes) at
// /v1/sandboxes/{id} + its agent path and forwards it, most as they are
// (proxy), the streaming ones through one relay (stream.go).

// agentPath is the agent's path of a toolbox request:
// /v1/sandboxes/{id}/files/list becomes /files/list.
func agentPath(r *http.Request) string {
	return strings.TrimPrefix(r.URL.Path, "/v1/sandboxes/"+r.PathValue("id"))
}

// proxy forwards a toolbox request to the sandbox's agent, streaming the body
// both ways.
func (s *Server) proxy(w http.ResponseWriter, r *http.Request) error {
	client, _, err := s.agentFor(r) // lookup.go
	if err != nil {
		return err
	}
	return s.proxyTo(client, w, r)
}

// proxyTo is proxy to client.
func (s *Server) proxyTo(client *agentapi.Client, w http.ResponseWriter, r *http.Request) error {
	client.Proxy(agentPath(r), func(w http.ResponseWriter, r *http.Request, err error) {
		writeError(w, r, agentLost(err))
	}).ServeHTTP(w, r)
	return nil
}

// agentLost is the error for a toolbox call whose agent went away. An agent
// that answered too much keeps its own code.
func agentLost(err error) error {
	if errdefs.CodeOf(err) == wire.CodeAgentResponseTooLarge {
		return err
	}
	return &errdefs.Error{Kind: errdefs.KindUnavailable, Code: wire.CodeSandboxUnavailable,
		Message: "the sandbox's instance did not answer; it may be stopping or have crashed: check its state and retry", Err: err}
}

// execTimeoutMargin is how long past a command's timeoutSeconds the daemon
// waits for the agent's answer: the agent kills the command at its timeout,
// so only an agent that stopped answering (frozen from inside) takes longer.
const execTimeoutMargin = 10 * time.Second

// exec runs a command; with stream=true its events are relayed, and a
// stream that breaks before the exit event ends with an error event. A
// command with timeoutSeconds is abandoned execTimeoutMargin after it, so a
// silent agent cannot hold the request.
func (s *Server) exec(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, httpjson.MaxBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return errdefs.TooLarge(wire.CodeBodyTooLarge, "the request body is larger than %d bytes", httpjson.MaxBody)
	} else if err != nil {
		return errdefs.Invalid(wire.CodeInvalidJSON, "reading the request body: %v", err)
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	var req struct{ TimeoutSeconds float64 }
	if json.Unmarshal(body, &req) == nil && req.TimeoutSeconds > 0 {
		ctx, cancel := context.WithTimeout(r.Context(), time.Duration(req.TimeoutSeconds*float64(time.Second))+execTimeoutMargin)
		defer cancel()
		r = r.WithContext(ctx)
	}
	return s.streamOrProxy(w, r, agentapi.ExecFinal, agentapi.MaxLine)
}

// runCode runs code (in a context, or stateless) like exec; a run's stream
// ends with "end", and its lines may carry large images.
func (s *Server) runCode(w http.ResponseWriter, r *http.Request) error {
	return s.streamOrProxy(w, r, agentapi.RunFinal, agentapi.MaxRunLine)
}

// streamProxy forwards the other requests whose answer may be a stream
// (process logs, session commands, watch).
func (s *Server) streamProxy(w http.ResponseWriter, r *http.Request) error {
	return s.forward(w, r, agentapi.AnyFinal, agentapi.MaxLine)
}

func (s *Server) streamOrProxy(w http.ResponseWriter, r *http.Request, final agentapi.Final, maxLine int) error {
	stream, err := httpjson.BoolParam(r, "stream")
	if err != nil {
		return err
	}
	if !stream {
		return s.proxy(w, r)
	}
	return s.forward(w, r, final, maxLine)
}

// forward sends a toolbox request to the agent; an NDJSON answer goes
// through relay, any other answer (an error before the stream began, a
// plain JSON result) passes as it is.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, final agentapi.Final, maxLine int) error {
	client, sb, err := s.agentFor(r) // lookup.go
	if err != nil {
		return err
	}
	req := agentapi.Request{Method: r.Method, Path: agentPath(r), RawQuery: r.URL.RawQuery,
		ContentType: r.Header.Get("Content-Type"), ContentLength: r.ContentLength}
	if r.ContentLength != 0 {
		req.Body = http.MaxBytesReader(w, r.Body, httpjson.MaxBody)
	}
	resp, err := client.Forward(r.Context(), req)
	if err != nil {
		return agentLost(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), agentapi.ContentTypeNDJSON) {
		copyResponse(w, resp)
		return nil
	}
	relay(w, r, resp.Body, final, maxLine, func() wire.ErrorBody { return s.instanceLost(r.Context(), sb.ID) })
	return nil
}

func copyResponse(w http.ResponseWriter, resp *http.Response) {
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	bufio.NewReader(resp.Body).WriteTo(w)
}
