package daytona

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/sdk"
)

// Sessions: sbx's agent keeps the shell (cd and exports persist); Daytona
// also names each command run in a session, runs it in the background on
// request and serves its output later. That bookkeeping lives here, in
// memory: a command's output is kept until its session is deleted or the
// daemon restarts (then its logs are gone; the session's shell is not).

// maxCommandOutput bounds the output kept per command; the rest is dropped.
const maxCommandOutput = 8 << 20

// command is one command run in a session.
type command struct {
	id, text string

	mu       sync.Mutex
	chunks   []chunk       // output in order
	size     int           // bytes in chunks
	exitCode *int          // set once it ended
	changed  chan struct{} // closed and replaced on every change
}

type chunk struct {
	stderr bool
	data   []byte
}

func newCommand(id, text string) *command {
	return &command{id: id, text: text, changed: make(chan struct{})}
}

func (c *command) append(stderr bool, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.size+len(data) > maxCommandOutput {
		data = data[:max(0, maxCommandOutput-c.size)]
	}
	if len(data) > 0 {
		c.chunks = append(c.chunks, chunk{stderr, bytes.Clone(data)})
		c.size += len(data)
	}
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *command) finish(code int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.exitCode == nil {
		c.exitCode = &code
	}
	close(c.changed)
	c.changed = make(chan struct{})
}

// snapshot returns the chunks from index from on, whether it ended, and a
// channel closed at the next change.
func (c *command) snapshot(from int) ([]chunk, *int, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.chunks[min(from, len(c.chunks)):], c.exitCode, c.changed
}

// logs returns the command's output: all of it, stdout, stderr.
func (c *command) logs() (all, stdout, stderr string) {
	chunks, _, _ := c.snapshot(0)
	var a, o, e bytes.Buffer
	for _, ch := range chunks {
		a.Write(ch.data)
		if ch.stderr {
			e.Write(ch.data)
		} else {
			o.Write(ch.data)
		}
	}
	return a.String(), o.String(), e.String()
}

// sessionLog holds the commands of every session, by sandbox and session.
type sessionLog struct {
	mu   sync.Mutex
	cmds map[string][]*command // sandboxID/sessionID → commands, oldest first
	seq  atomic.Int64
}

func newSessionLog() *sessionLog { return &sessionLog{cmds: map[string][]*command{}} }

func sessionKey(sandboxID, session string) string { return sandboxID + "/" + session }

func (l *sessionLog) add(key string, c *command) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cmds[key] = append(l.cmds[key], c)
}

func (l *sessionLog) list(key string) []*command {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*command(nil), l.cmds[key]...)
}

func (l *sessionLog) get(key, id string) *command {
	for _, c := range l.list(key) {
		if c.id == id {
			return c
		}
	}
	return nil
}

// forgetSandbox drops the commands of every session of a sandbox.
func (l *sessionLog) forgetSandbox(sandboxID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k := range l.cmds {
		if strings.HasPrefix(k, sandboxID+"/") {
			delete(l.cmds, k)
		}
	}
}

func (l *sessionLog) forget(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.cmds, key)
}

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

func (c *command) dto() commandDTO {
	_, code, _ := c.snapshot(0)
	return commandDTO{ID: c.id, Command: c.text, ExitCode: code}
}

func (h *Handler) sessionDTO(sandboxID, session string) sessionDTO {
	d := sessionDTO{SessionID: session, Commands: []commandDTO{}}
	for _, c := range h.sessions.list(sessionKey(sandboxID, session)) {
		d.Commands = append(d.Commands, c.dto())
	}
	return d
}

func (h *Handler) createSession(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		SessionID string `json:"sessionId"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if in.SessionID == "" {
		return invalid(sdk.CodeInvalidID, "sessionId is required")
	}
	c, sb, err := h.agentFor(r)
	if err != nil {
		return err
	}
	if err := call(r.Context(), c, agentapi.CreateSession, agentapi.CreateSession.Path, nil, sdk.CreateSessionRequest{ID: in.SessionID}, nil); err != nil {
		return err
	}
	h.sessions.forget(sessionKey(sb.ID, in.SessionID)) // a new session of an old name starts clean
	w.WriteHeader(http.StatusCreated)
	return nil
}

func sessionPath(id string) string { return "/sessions/" + url.PathEscape(id) }

func (h *Handler) getSession(w http.ResponseWriter, r *http.Request) error {
	c, sb, err := h.agentFor(r)
	if err != nil {
		return err
	}
	id := r.PathValue("session")
	if err := call(r.Context(), c, agentapi.GetSession, sessionPath(id), nil, nil, nil); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, h.sessionDTO(sb.ID, id))
	return nil
}

func (h *Handler) listSessions(w http.ResponseWriter, r *http.Request) error {
	c, sb, err := h.agentFor(r)
	if err != nil {
		return err
	}
	var list []sdk.Session
	if err := call(r.Context(), c, agentapi.ListSessions, agentapi.ListSessions.Path, nil, nil, &list); err != nil {
		return err
	}
	out := []sessionDTO{}
	for _, s := range list {
		out = append(out, h.sessionDTO(sb.ID, s.ID))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) deleteSession(w http.ResponseWriter, r *http.Request) error {
	c, sb, err := h.agentFor(r)
	if err != nil {
		return err
	}
	id := r.PathValue("session")
	if err := call(r.Context(), c, agentapi.DeleteSession, sessionPath(id), nil, nil, nil); err != nil {
		return err
	}
	h.sessions.forget(sessionKey(sb.ID, id))
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// sessionExec serves POST /process/session/{session}/exec: the command
// runs in the session's shell; with runAsync the answer is its id at once
// and its output is collected in the background.
func (h *Handler) sessionExec(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Command  string `json:"command"`
		RunAsync bool   `json:"runAsync"`
		Async    bool   `json:"async"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if in.Command == "" {
		return invalid(sdk.CodeInvalidCommand, "command is required")
	}
	c, sb, err := h.agentFor(r)
	if err != nil {
		return err
	}
	session := r.PathValue("session")
	async := in.RunAsync || in.Async
	ctx := r.Context()
	if async {
		ctx = context.WithoutCancel(ctx) // outlives this request
	}
	body, _ := json.Marshal(sdk.SessionExecRequest{Command: in.Command})
	resp, err := c.Forward(ctx, agentapi.Request{Method: agentapi.SessionExec.Method, Path: sessionPath(session) + "/exec",
		RawQuery: "stream=true", ContentType: "application/json", Body: bytes.NewReader(body), ContentLength: int64(len(body))})
	if err != nil {
		return agentLost(err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return agentapi.ResponseError(resp)
	}
	cmd := newCommand("cmd-"+strconv.FormatInt(h.sessions.seq.Add(1), 10), in.Command)
	h.sessions.add(sessionKey(sb.ID, session), cmd)
	if async {
		go collect(resp.Body, cmd)
		writeJSON(w, http.StatusAccepted, map[string]string{"cmdId": cmd.id})
		return nil
	}
	collect(resp.Body, cmd)
	all, stdout, stderr := cmd.logs()
	_, code, _ := cmd.snapshot(0)
	writeJSON(w, http.StatusOK, map[string]any{"cmdId": cmd.id, "exitCode": code, "output": all, "stdout": stdout, "stderr": stderr})
	return nil
}

// collect reads a session command's event stream into cmd until it exits.
// A stream that breaks first ends the command with exit code -1.
func collect(body io.ReadCloser, cmd *command) {
	defer body.Close()
	rd := agentapi.NewReader(body, agentapi.MaxLine)
	for {
		line, err := rd.Next()
		if err != nil {
			cmd.finish(-1)
			return
		}
		var ev sdk.SessionEvent
		if json.Unmarshal(line, &ev) != nil {
			continue
		}
		switch ev.Type {
		case "stdout", "stderr":
			cmd.append(ev.Type == "stderr", ev.Data)
		case agentapi.EventExit:
			cmd.finish(ev.ExitCode)
			return
		case agentapi.EventError:
			if ev.Error != nil {
				cmd.append(true, []byte(ev.Error.Message+"\n"))
			}
			cmd.finish(-1)
			return
		}
	}
}

func (h *Handler) commandFor(r *http.Request) (*command, error) {
	_, sb, err := h.agentFor(r)
	if err != nil {
		return nil, err
	}
	cmd := h.sessions.get(sessionKey(sb.ID, r.PathValue("session")), r.PathValue("command"))
	if cmd == nil {
		return nil, errdefs.NotFound(sdk.CodeCommandNotFound, "no command %s in session %s", r.PathValue("command"), r.PathValue("session"))
	}
	return cmd, nil
}

func (h *Handler) getSessionCommand(w http.ResponseWriter, r *http.Request) error {
	cmd, err := h.commandFor(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, cmd.dto())
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
	cmd, err := h.commandFor(r)
	if err != nil {
		return err
	}
	if r.URL.Query().Get("follow") != "true" {
		all, stdout, stderr := cmd.logs()
		writeJSON(w, http.StatusOK, map[string]string{"output": all, "stdout": stdout, "stderr": stderr})
		return nil
	}
	ws, err := acceptWebSocket(w, r)
	if err != nil {
		return nil // Accept has answered
	}
	ctx := r.Context()
	sent := 0
	for {
		chunks, code, changed := cmd.snapshot(sent)
		for _, ch := range chunks {
			prefix := stdoutPrefix
			if ch.stderr {
				prefix = stderrPrefix
			}
			if err := ws.write(ctx, append(append([]byte{}, prefix...), ch.data...)); err != nil {
				return nil
			}
			sent++
		}
		if code != nil {
			ws.closeNormal()
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil
		}
	}
}
