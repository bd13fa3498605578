package daytona

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/coder/websocket"
	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/wire"
)

// The code interpreter: Daytona's runCode is a WebSocket that takes one
// JSON request and streams {"type":"stdout"|"stderr"|"error"|"control"}
// messages; its contexts are sbx's code contexts (long-lived python
// interpreters). Without a context, runs share one default context per
// sandbox, as Daytona's do (state persists between them): the agent's
// context named defaultContextID, which dies with the instance.

// timeoutClose is the close code the SDK reads as a timeout.
const timeoutClose = 4008

type interpreterContext struct {
	ID        string `json:"id"`
	Cwd       string `json:"cwd"`
	Language  string `json:"language"`
	CreatedAt string `json:"createdAt"`
	Active    bool   `json:"active"`
}

func toInterpreterContext(c wire.Context) interpreterContext {
	return interpreterContext{ID: c.ID, Cwd: c.Cwd, Language: c.Language, CreatedAt: stamp(c.CreatedAt), Active: true}
}

func (h *Handler) createContext(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Cwd      string `json:"cwd"`
		Language string `json:"language"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if in.Language == "" {
		in.Language = "python"
	}
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	out, err := agentapi.Call[wire.Context](r.Context(), c, agentapi.CreateContext, agentapi.Params{}, wire.CreateContextRequest{Language: in.Language, Cwd: in.Cwd})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toInterpreterContext(out))
	return nil
}

func (h *Handler) listContexts(w http.ResponseWriter, r *http.Request) error {
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	list, err := agentapi.Call[[]wire.Context](r.Context(), c, agentapi.ListContexts, agentapi.Params{}, nil)
	if err != nil {
		return err
	}
	out := []interpreterContext{}
	for _, x := range list {
		if x.ID != defaultContextID {
			out = append(out, toInterpreterContext(x))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"contexts": out})
	return nil
}

func (h *Handler) deleteContext(w http.ResponseWriter, r *http.Request) error {
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	if _, err := agentapi.Call[none](r.Context(), c, agentapi.DeleteContext, at(r.PathValue("cid")), nil); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// runRequest is the message that starts a run on the interpreter socket.
type runRequest struct {
	Code      string            `json:"code"`
	ContextID string            `json:"contextId"`
	Envs      map[string]string `json:"envs"`
	Timeout   float64           `json:"timeout"` // seconds
}

// interpreterExecute serves the /process/interpreter/execute WebSocket.
func (h *Handler) interpreterExecute(w http.ResponseWriter, r *http.Request) error {
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	ws, err := acceptWebSocket(w, r)
	if err != nil {
		return nil
	}
	defer ws.c.CloseNow()
	ctx := r.Context()
	_, msg, err := ws.c.Read(ctx)
	if err != nil {
		return nil
	}
	var in runRequest
	if err := json.Unmarshal(msg, &in); err != nil || in.Code == "" || in.Timeout < 0 {
		ws.c.Close(websocket.StatusPolicyViolation, "the first message must be {\"code\": …, \"contextId\"?, \"envs\"?, \"timeout\"?}")
		return nil
	}
	cid := in.ContextID
	if cid == "" {
		if cid, err = defaultContext(r, c); err != nil {
			ws.c.Close(websocket.StatusInternalError, truncate(err.Error()))
			return nil
		}
	}
	body, _ := json.Marshal(wire.RunCodeRequest{Code: in.Code, Env: in.Envs, TimeoutSeconds: in.Timeout})
	runCtx := ctx
	if in.Timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, time.Duration(in.Timeout*float64(time.Second))+execMargin)
		defer cancel()
	}
	resp, err := agentapi.Open(runCtx, c, agentapi.RunContext, agentapi.Params{Path: []string{cid}, Query: url.Values{"stream": {"true"}}}, bytes.NewReader(body), "application/json")
	if err != nil {
		ws.c.Close(websocket.StatusInternalError, truncate(err.Error()))
		return nil
	}
	defer resp.Body.Close()
	send := func(v any) bool {
		b, _ := json.Marshal(v)
		return ws.writeText(ctx, string(b)) == nil
	}
	rd := agentapi.NewReader(resp.Body, agentapi.MaxRunLine)
	for {
		line, err := rd.Next()
		if err != nil {
			ws.c.Close(websocket.StatusInternalError, "the interpreter's stream broke")
			return nil
		}
		var ev wire.RunEvent
		if json.Unmarshal(line, &ev) != nil {
			continue
		}
		switch ev.Type {
		case "stdout", "stderr":
			if !send(map[string]string{"type": ev.Type, "text": string(ev.Data)}) {
				return nil
			}
		case "error":
			if ev.Error == nil {
				continue
			}
			if ev.Error.Name == "" { // the stream itself failed
				ws.c.Close(websocket.StatusInternalError, truncate(ev.Error.Message))
				return nil
			}
			if !send(map[string]string{"type": "error", "name": ev.Error.Name, "value": ev.Error.Value, "traceback": ev.Error.Traceback}) {
				return nil
			}
		case agentapi.EventEnd:
			if ev.TimedOut {
				ws.c.Close(timeoutClose, "execution timed out")
				return nil
			}
			send(map[string]string{"type": "control", "text": "completed"})
			ws.closeNormal()
			return nil
		}
	}
}

// defaultContextID names the sandbox's default python context.
const defaultContextID = "daytona-default-python"

// defaultContext returns the sandbox's default python context, which the
// agent starts if there is none or its interpreter is gone.
func defaultContext(r *http.Request, c *agentapi.Client) (string, error) {
	out, err := agentapi.Call[wire.Context](r.Context(), c, agentapi.EnsureContext, at(defaultContextID),
		wire.CreateContextRequest{Language: "python"})
	return out.ID, err
}

// truncate keeps a close reason within the 123 bytes a close frame allows.
func truncate(s string) string {
	if len(s) > 120 {
		return s[:120]
	}
	return s
}
