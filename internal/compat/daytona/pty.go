package daytona

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/coder/websocket"
	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Terminals: Daytona's create-connect WebSocket makes a PTY and attaches to
// it in one step; sbx's agent has the two (CreatePTY, AttachPTY), and this
// layer bridges the client's WebSocket to the agent's, turning the agent's
// "exit" control frame into Daytona's {"type":"control","status":"exited"}.

const (
	ptyExitControl = "X-Daytona-Pty-Exit-Control"
	ptyEnvsPrefix  = "X-Daytona-Pty-Envs~"
)

// ptyInfo is Daytona's PtySessionInfo.
type ptyInfo struct {
	ID        string            `json:"id"`
	Cols      int               `json:"cols"`
	Rows      int               `json:"rows"`
	Cwd       string            `json:"cwd"`
	Envs      map[string]string `json:"envs"`
	CreatedAt string            `json:"createdAt"`
	Active    bool              `json:"active"`
	LazyStart bool              `json:"lazyStart"`
}

func toPTYInfo(p wire.PTY) ptyInfo {
	return ptyInfo{ID: p.ID, Cols: p.Cols, Rows: p.Rows, Cwd: p.Cwd, Envs: map[string]string{},
		CreatedAt: stamp(p.CreatedAt), Active: p.State == wire.ProcessRunning}
}

// ptyEnvs reads the environment the SDK sends as a subprotocol
// (base64url JSON), since a browser WebSocket cannot send headers.
func ptyEnvs(r *http.Request) (map[string]string, error) {
	for _, p := range websocketProtocols(r) {
		if b64, ok := strings.CutPrefix(p, ptyEnvsPrefix); ok {
			b, err := base64.RawURLEncoding.DecodeString(b64)
			var env map[string]string
			if err == nil {
				err = json.Unmarshal(b, &env)
			}
			if err != nil {
				return nil, invalid(wire.CodeInvalidEnv, "the %s subprotocol must be base64url JSON of string values: %v", ptyEnvsPrefix, err)
			}
			return env, nil
		}
	}
	return nil, nil
}

func websocketProtocols(r *http.Request) []string {
	var out []string
	for _, h := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(h, ",") {
			out = append(out, strings.TrimSpace(p))
		}
	}
	return out
}

// ptyCreateConnect serves GET /process/pty/create-connect?id&cols&rows&cwd.
func (h *Handler) ptyCreateConnect(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	req := wire.CreatePTYRequest{ID: q.Get("id"), Cwd: q.Get("cwd")}
	if req.ID == "" {
		return invalid(wire.CodeInvalidID, "id is required")
	}
	for _, p := range []struct {
		name string
		dst  *int
	}{{"cols", &req.Cols}, {"rows", &req.Rows}} {
		if s := q.Get(p.name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > 1000 {
				return invalid(wire.CodeInvalidSize, "%s must be from 1 to 1000, got %q", p.name, s)
			}
			*p.dst = n
		}
	}
	env, err := ptyEnvs(r)
	if err != nil {
		return err
	}
	req.Env = env
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	if _, err := agentapi.Call[none](r.Context(), c, agentapi.CreatePTY, agentapi.Params{}, req); err != nil {
		return err
	}
	return h.bridgePTY(w, r, c, req.ID)
}

// ptyConnect serves GET /process/pty/{pty}/connect: attach to a PTY.
func (h *Handler) ptyConnect(w http.ResponseWriter, r *http.Request) error {
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	if _, err := agentapi.Call[none](r.Context(), c, agentapi.GetPTY, at(r.PathValue("pty")), nil); err != nil {
		return err
	}
	return h.bridgePTY(w, r, c, r.PathValue("pty"))
}

// bridgePTY attaches to the agent's terminal and relays both ways until
// either side ends. Closing the client's side detaches; the PTY lives on
// until it is killed (DELETE) or its program exits.
func (h *Handler) bridgePTY(w http.ResponseWriter, r *http.Request, c *agentapi.Client, id string) error {
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	agentWS, resp, err := websocket.Dial(ctx, "ws://agent"+agentapi.AttachPTY.Expand(id), &websocket.DialOptions{HTTPClient: &http.Client{Transport: c.Transport()}})
	if err != nil {
		if resp != nil && resp.Body != nil {
			resp.Body.Close()
		}
		return errdefs.Unavailable(wire.CodeAgentUnavailable, "attach to terminal %s: %v", id, err)
	}
	defer agentWS.CloseNow()
	agentWS.SetReadLimit(1 << 20)
	client, err := acceptWebSocket(w, r, ptyExitControl)
	if err != nil {
		return nil
	}
	defer client.c.CloseNow()
	if client.writeText(ctx, `{"type":"control","status":"connected"}`) != nil {
		return nil
	}
	go func() { // client → agent: keystrokes
		defer cancel()
		for {
			_, b, err := client.c.Read(ctx)
			if err != nil {
				return
			}
			if agentWS.Write(ctx, websocket.MessageBinary, b) != nil {
				return
			}
		}
	}()
	for { // agent → client: output, then the exit
		typ, b, err := agentWS.Read(ctx)
		if err != nil {
			return nil
		}
		if typ == websocket.MessageBinary {
			if client.write(ctx, b) != nil {
				return nil
			}
			continue
		}
		var ctl wire.PTYControl
		if json.Unmarshal(b, &ctl) == nil && ctl.Type == "exit" {
			exit, _ := json.Marshal(map[string]any{"type": "control", "status": "exited", "exitCode": ctl.ExitCode})
			client.writeText(ctx, string(exit))
			client.closeNormal()
			return nil
		}
	}
}

func (h *Handler) listPTYs(w http.ResponseWriter, r *http.Request) error {
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	list, err := agentapi.Call[[]wire.PTY](r.Context(), c, agentapi.ListPTYs, agentapi.Params{}, nil)
	if err != nil {
		return err
	}
	out := []ptyInfo{}
	for _, p := range list {
		out = append(out, toPTYInfo(p))
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": out})
	return nil
}

func (h *Handler) getPTY(w http.ResponseWriter, r *http.Request) error {
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	p, err := agentapi.Call[wire.PTY](r.Context(), c, agentapi.GetPTY, at(r.PathValue("pty")), nil)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toPTYInfo(p))
	return nil
}

func (h *Handler) deletePTY(w http.ResponseWriter, r *http.Request) error {
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	if _, err := agentapi.Call[none](r.Context(), c, agentapi.DeletePTY, at(r.PathValue("pty")), nil); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"message": "PTY session " + r.PathValue("pty") + " deleted"})
	return nil
}

func (h *Handler) resizePTY(w http.ResponseWriter, r *http.Request) error {
	var in wire.ResizeRequest
	if err := decode(w, r, &in); err != nil {
		return err
	}
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	p, err := agentapi.Call[wire.PTY](r.Context(), c, agentapi.ResizePTY, at(r.PathValue("pty")), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toPTYInfo(p))
	return nil
}
