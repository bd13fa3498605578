package daytona

import (
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/wire"
)

// Sessions: sbx's agent keeps the shell (cd and exports persist) and the
// record of each command run in it (its id, output and exit code;
// agentapi.SessionRun), so the layer keeps nothing: a daemon restart loses
// neither the commands nor their output.

// sessionDTO is Daytona's Session.
type sessionDTO struct {
	SessionID string       `json:"sessionId"`
	Commands  []commandDTO `json:"commands"`
}

type commandDTO struct {
	ID       string `json:"id"`
	Command  string `json:"command"`
	ExitCode *int   `json:"exitCode,omitempty"`
}

func toCommandDTO(c wire.SessionCommand) commandDTO {
	return commandDTO{ID: c.ID, Command: c.Command, ExitCode: c.ExitCode}
}

// sessionDTO reads the commands of session id from the agent.
func sessionOf(r *http.Request, c *agentapi.Client, id string) (sessionDTO, error) {
	cmds, err := agentapi.Call[[]wire.SessionCommand](r.Context(), c, agentapi.SessionCommands, at(id), nil)
	if err != nil {
		return sessionDTO{}, err
	}
	d := sessionDTO{SessionID: id, Commands: []commandDTO{}}
	for _, x := range cmds {
		d.Commands = append(d.Commands, toCommandDTO(x))
	}
	return d, nil
}

func (h *Handler) createSession(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		SessionID string `json:"sessionId"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if in.SessionID == "" {
		return invalid(wire.CodeInvalidID, "sessionId is required")
	}
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	if _, err := agentapi.Call[none](r.Context(), c, agentapi.CreateSession, agentapi.Params{}, wire.CreateSessionRequest{ID: in.SessionID}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusCreated)
	return nil
}

func (h *Handler) getSession(w http.ResponseWriter, r *http.Request) error {
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	d, err := sessionOf(r, c, r.PathValue("session"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

func (h *Handler) listSessions(w http.ResponseWriter, r *http.Request) error {
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	list, err := agentapi.Call[[]wire.Session](r.Context(), c, agentapi.ListSessions, agentapi.Params{}, nil)
	if err != nil {
		return err
	}
	out := []sessionDTO{}
	for _, s := range list {
		d, err := sessionOf(r, c, s.ID)
		if err != nil {
			continue // deleted meanwhile
		}
		out = append(out, d)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) deleteSession(w http.ResponseWriter, r *http.Request) error {
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	if _, err := agentapi.Call[none](r.Context(), c, agentapi.DeleteSession, at(r.PathValue("session")), nil); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// sessionExec serves POST /process/session/{session}/exec: the command
// runs in the session's shell; with runAsync the answer is its id at once,
// and it reads the input sent to it (sendSessionCommandInput), echoed to
// its output unless suppressInputEcho.
func (h *Handler) sessionExec(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Command      string `json:"command"`
		RunAsync     bool   `json:"runAsync"`
		Async        bool   `json:"async"`
		SuppressEcho bool   `json:"suppressInputEcho"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if in.Command == "" {
		return invalid(wire.CodeInvalidCommand, "command is required")
	}
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	async := in.RunAsync || in.Async
	cmd, err := agentapi.Call[wire.SessionCommand](r.Context(), c, agentapi.SessionRun, at(r.PathValue("session")),
		wire.SessionRunRequest{Command: in.Command, Async: async, Echo: !in.SuppressEcho})
	if err != nil {
		return err
	}
	if async {
		writeJSON(w, http.StatusAccepted, map[string]string{"cmdId": cmd.ID})
		return nil
	}
	logs := cmd.Logs
	if logs == nil {
		logs = &wire.SessionLogs{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"cmdId": cmd.ID, "exitCode": cmd.ExitCode, "output": logs.Output, "stdout": logs.Stdout, "stderr": logs.Stderr})
	return nil
}

func commandParams(r *http.Request) agentapi.Params {
	return at(r.PathValue("session"), r.PathValue("command"))
}

func (h *Handler) getSessionCommand(w http.ResponseWriter, r *http.Request) error {
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	cmd, err := agentapi.Call[wire.SessionCommand](r.Context(), c, agentapi.SessionCommandGet, commandParams(r), nil)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toCommandDTO(cmd))
	return nil
}

// sendSessionInput serves POST …/command/{command}/input {data}: bytes for
// the stdin of a command started with runAsync.
func (h *Handler) sendSessionInput(w http.ResponseWriter, r *http.Request) error {
	var in wire.SessionInput
	if err := decode(w, r, &in); err != nil {
		return err
	}
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	if _, err := agentapi.Call[none](r.Context(), c, agentapi.SessionCommandInput, commandParams(r), in); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// Daytona's log stream marks each frame's stream with a prefix.
var (
	stdoutPrefix = []byte{1, 1, 1}
	stderrPrefix = []byte{2, 2, 2}
)

// commandLogs serves GET …/command/{command}/logs: the output as JSON, or
// with follow=true a WebSocket of prefixed frames until the command ends.
func (h *Handler) commandLogs(w http.ResponseWriter, r *http.Request) error {
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	if r.URL.Query().Get("follow") != "true" {
		logs, err := agentapi.Call[wire.SessionLogs](r.Context(), c, agentapi.SessionCommandLogs, commandParams(r), nil)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]string{"output": logs.Output, "stdout": logs.Stdout, "stderr": logs.Stderr})
		return nil
	}
	p := commandParams(r)
	p.Query = url.Values{"follow": {"true"}}
	resp, err := agentapi.Open(r.Context(), c, agentapi.SessionCommandLogs, p, nil, "")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	ws, err := acceptWebSocket(w, r)
	if err != nil {
		return nil // Accept has answered
	}
	ctx := r.Context()
	rd := agentapi.NewReader(resp.Body, agentapi.MaxLine)
	for {
		line, err := rd.Next()
		if err != nil {
			return nil // the stream broke: the SDK sees the socket close
		}
		var ev wire.SessionLogEvent
		if json.Unmarshal(line, &ev) != nil {
			continue
		}
		switch ev.Type {
		case "stdout", "stderr":
			prefix := stdoutPrefix
			if ev.Type == "stderr" {
				prefix = stderrPrefix
			}
			if err := ws.write(ctx, append(append([]byte{}, prefix...), ev.Data...)); err != nil {
				return nil
			}
		case agentapi.EventExit:
			ws.closeNormal()
			return nil
		}
	}
}
