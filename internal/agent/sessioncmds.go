package agent

import (
	"bytes"
	"cmp"
	"context"
	"encoding/hex"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/wire"
)

// Recorded session commands: commands run in a session's shell (so cd and
// exports carry over, as with SessionExec) that the agent keeps a record
// of — id, text, output, exit code — for callers that look them up later
// (Daytona's sessions). The record lives here, with the shell, so it
// outlives the daemon that asked. A background command's stdin is a FIFO
// the agent holds open for writing: SessionCommandInput writes to it.

// sessionCmds is a session's record. The zero value is ready.
type sessionCmds struct {
	mu   sync.Mutex
	list []*sessionCmd // oldest first
	seq  int
}

// sessionCmd is one recorded command; it is its own execOutput.
type sessionCmd struct {
	id, text string
	echo     bool // input is added to stdout

	mu        sync.Mutex
	chunks    []sessionChunk
	size      int
	truncated bool
	exitCode  *int
	stdin     *os.File      // the FIFO's write end while it runs; nil for none
	changed   chan struct{} // closed and replaced on every change
}

type sessionChunk struct {
	stderr bool
	data   []byte
}

func (c *sessionCmd) started(int) {}

func (c *sessionCmd) write(stream string, p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := agentapi.MaxSessionCommandOutput - c.size; len(p) > room {
		p, c.truncated = p[:max(0, room)], true
	}
	if len(p) > 0 {
		c.chunks = append(c.chunks, sessionChunk{stream == "stderr", bytes.Clone(p)})
		c.size += len(p)
	}
	c.notify()
}

func (c *sessionCmd) notify() {
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *sessionCmd) finish(code int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.exitCode = &code
	if c.stdin != nil {
		c.stdin.Close()
		c.stdin = nil
	}
	c.notify()
}

// snapshot is the output from chunk from on, the exit code (nil while it
// runs) and a channel closed at the next change.
func (c *sessionCmd) snapshot(from int) ([]sessionChunk, *int, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.chunks[min(from, len(c.chunks)):], c.exitCode, c.changed
}

func (c *sessionCmd) toAPI(withLogs bool) wire.SessionCommand {
	chunks, code, _ := c.snapshot(0)
	out := wire.SessionCommand{ID: c.id, Command: c.text, ExitCode: code}
	if withLogs {
		var all, o, e bytes.Buffer
		for _, ch := range chunks {
			all.Write(ch.data)
			if ch.stderr {
				e.Write(ch.data)
			} else {
				o.Write(ch.data)
			}
		}
		c.mu.Lock()
		out.Logs = &wire.SessionLogs{Output: all.String(), Stdout: o.String(), Stderr: e.String(), Truncated: c.truncated}
		c.mu.Unlock()
	}
	return out
}

// add records a new command, dropping the oldest ended ones past the bound.
func (t *sessionCmds) add(text string, echo bool) *sessionCmd {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seq++
	c := &sessionCmd{id: "cmd-" + strconv.Itoa(t.seq), text: text, echo: echo, changed: make(chan struct{})}
	for i := 0; len(t.list) >= agentapi.MaxSessionCommands && i < len(t.list); {
		if _, code, _ := t.list[i].snapshot(0); code != nil {
			t.list = append(t.list[:i], t.list[i+1:]...)
			continue
		}
		i++
	}
	t.list = append(t.list, c)
	return c
}

func (t *sessionCmds) get(id string) *sessionCmd {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.list {
		if c.id == id {
			return c
		}
	}
	return nil
}

func (t *sessionCmds) all() []*sessionCmd {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]*sessionCmd(nil), t.list...)
}

// openStdin makes the FIFO a background command reads its stdin from and
// opens its write end (O_RDWR, so neither side blocks on open). The FIFO
// is the session user's; it is removed once the command ends.
func (s *server) openStdin(ss *session) (string, *os.File, error) {
	var b [8]byte
	for i := range b {
		b[i] = byte(rand.Uint32())
	}
	path := filepath.Join(cmp.Or(s.runDir, os.TempDir()), "stdin-"+hex.EncodeToString(b[:]))
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		return "", nil, errdefs.Internal(err, "make the command's stdin")
	}
	if cred := ss.start.cred; cred != nil {
		if err := os.Chown(path, int(cred.Uid), int(cred.Gid)); err != nil {
			os.Remove(path)
			return "", nil, errdefs.Internal(err, "give the command's stdin to its user")
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		os.Remove(path)
		return "", nil, errdefs.Internal(err, "open the command's stdin")
	}
	return path, f, nil
}

// run runs c in the session and records how it ended.
func (s *server) runRecorded(ctx context.Context, ss *session, c *sessionCmd, stdin string, req wire.SessionRunRequest) {
	timeout := ss.start.timeout
	if req.TimeoutSeconds != 0 {
		timeout, _ = checkTimeout(req.TimeoutSeconds) // checked by the handler
	}
	if stdin != "/dev/null" {
		defer os.Remove(stdin)
	}
	res, err := s.runInSessionFrom(ctx, ss, c.text, stdin, timeout, c)
	if err != nil {
		c.write("stderr", []byte(err.Error()+"\n"))
		c.finish(-1)
		return
	}
	c.finish(res.exitCode)
}

func (s *server) handleSessionRun(w http.ResponseWriter, r *http.Request, ss *session) {
	var req wire.SessionRunRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	if req.Command == "" {
		writeError(w, errdefs.Invalid(wire.CodeInvalidCommand, "command is required"))
		return
	}
	if req.TimeoutSeconds != 0 {
		if _, err := checkTimeout(req.TimeoutSeconds); err != nil {
			writeError(w, err)
			return
		}
	}
	c := ss.cmds.add(req.Command, req.Echo)
	if !req.Async {
		s.runRecorded(r.Context(), ss, c, "/dev/null", req)
		writeJSON(w, http.StatusOK, c.toAPI(true))
		return
	}
	path, f, err := s.openStdin(ss)
	if err != nil {
		c.finish(-1)
		writeError(w, err)
		return
	}
	c.mu.Lock()
	c.stdin = f
	c.mu.Unlock()
	// It runs until it ends, the session is deleted (its shell killed) or
	// the agent shuts down: not bound to this request.
	go s.runRecorded(context.Background(), ss, c, path, req)
	writeJSON(w, http.StatusAccepted, c.toAPI(false))
}

func (s *server) handleSessionCommands(w http.ResponseWriter, r *http.Request, ss *session) {
	out := []wire.SessionCommand{}
	for _, c := range ss.cmds.all() {
		out = append(out, c.toAPI(false))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *server) withSessionCommand(h func(http.ResponseWriter, *http.Request, *sessionCmd)) func(http.ResponseWriter, *http.Request, *session) {
	return func(w http.ResponseWriter, r *http.Request, ss *session) {
		c := ss.cmds.get(r.PathValue("command"))
		if c == nil {
			writeError(w, errdefs.NotFound(wire.CodeCommandNotFound, "no command %q in session %q", r.PathValue("command"), ss.id))
			return
		}
		h(w, r, c)
	}
}

func (s *server) handleSessionCommand(w http.ResponseWriter, r *http.Request, c *sessionCmd) {
	writeJSON(w, http.StatusOK, c.toAPI(false))
}

// handleSessionCommandLogs answers the output so far, or with ?follow=true
// streams it as NDJSON SessionLogEvents until the command ends.
func (s *server) handleSessionCommandLogs(w http.ResponseWriter, r *http.Request, c *sessionCmd) {
	follow, err := httpjson.BoolParam(r, "follow")
	if err != nil {
		writeError(w, err)
		return
	}
	if !follow {
		writeJSON(w, http.StatusOK, c.toAPI(true).Logs)
		return
	}
	out := startNDJSON(w)
	defer out.stop()
	quit := s.streamsDone()
	for sent := 0; ; {
		chunks, code, changed := c.snapshot(sent)
		for _, ch := range chunks {
			typ := "stdout"
			if ch.stderr {
				typ = "stderr"
			}
			out.send(wire.SessionLogEvent{Type: typ, Data: ch.data})
			sent++
		}
		if code != nil {
			out.finish(wire.SessionLogEvent{Type: agentapi.EventExit, ExitCode: *code})
			return
		}
		select {
		case <-changed:
		case <-r.Context().Done():
			return
		case <-quit:
			return
		}
	}
}

// handleSessionCommandInput writes to a background command's stdin.
func (s *server) handleSessionCommandInput(w http.ResponseWriter, r *http.Request, c *sessionCmd) {
	var in wire.SessionInput
	if err := decodeJSON(w, r, &in); err != nil {
		writeError(w, err)
		return
	}
	c.mu.Lock()
	f := c.stdin
	ended := c.exitCode != nil
	c.mu.Unlock()
	switch {
	case ended:
		writeError(w, errdefs.Conflict(wire.CodeProcessExited, "command %s has ended", c.id))
		return
	case f == nil:
		writeError(w, errdefs.Conflict(wire.CodeStdinClosed, "command %s was not started in the background, so it takes no input", c.id))
		return
	}
	if _, err := f.WriteString(in.Data); err != nil {
		writeError(w, errdefs.Conflict(wire.CodeStdinClosed, "command %s no longer reads its input: %v", c.id, err))
		return
	}
	if c.echo {
		c.write("stdout", []byte(in.Data))
	}
	w.WriteHeader(http.StatusNoContent)
}

// sessionStdin is the redirect of a command's stdin in the session script.
func sessionStdin(path string) string { return " <'" + strings.ReplaceAll(path, "'", `'\''`) + "'" }
