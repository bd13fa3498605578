package agent

import (
	"net/http"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/wire"
)

func (s *server) handleCreateSession(w http.ResponseWriter, r *http.Request) {
	var req wire.CreateSessionRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	ss, err := s.createSession(&req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, ss.toAPI())
}

func (s *server) handleListSessions(w http.ResponseWriter, r *http.Request) {
	out := []wire.Session{}
	for _, ss := range s.sessions.list() {
		out = append(out, ss.toAPI())
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *server) withSession(h func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("session")
		ss, ok := s.sessions.get(id)
		if !ok {
			writeError(w, errdefs.NotFound(wire.CodeSessionNotFound, "no session %q in this sandbox", id))
			return
		}
		h(w, r, ss)
	}
}

func (s *server) handleGetSession(w http.ResponseWriter, r *http.Request, ss *session) {
	writeJSON(w, http.StatusOK, ss.toAPI())
}

func (s *server) handleDeleteSession(w http.ResponseWriter, r *http.Request, ss *session) {
	ss.kill()
	s.sessions.remove(ss)
	w.WriteHeader(http.StatusNoContent)
}

// handleSessionExec runs a command in the session: one JSON
// SessionExecResult, or with ?stream=true NDJSON SessionEvents ending in
// exactly one "exit".
func (s *server) handleSessionExec(w http.ResponseWriter, r *http.Request, ss *session) {
	stream, err := httpjson.BoolParam(r, "stream")
	if err != nil {
		writeError(w, err)
		return
	}
	var req wire.SessionExecRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	timeout := ss.start.timeout
	if req.TimeoutSeconds != 0 {
		if timeout, err = checkTimeout(req.TimeoutSeconds); err != nil {
			writeError(w, err)
			return
		}
	}
	if stream {
		out := &ndjsonOutput{w: w}
		res, err := s.runInSession(r.Context(), ss, req.Command, timeout, out)
		if err != nil { // nothing was sent yet
			writeError(w, err)
			return
		}
		out.s.finish(wire.SessionEvent{
			ExecEvent:    wire.ExecEvent{Type: "exit", ExitCode: res.exitCode, TimedOut: res.timedOut, DurationMs: res.duration.Milliseconds()},
			SessionEnded: res.sessionEnded, ShellRestarted: res.shellRestarted,
		})
		return
	}
	out := &collected{stdout: capBuffer{limit: s.outputLimit}, stderr: capBuffer{limit: s.outputLimit}}
	res, err := s.runInSession(r.Context(), ss, req.Command, timeout, out)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.SessionExecResult{
		ExitCode: res.exitCode, Stdout: out.stdout.String(), Stderr: out.stderr.String(),
		Truncated: out.stdout.truncated || out.stderr.truncated, DurationMs: res.duration.Milliseconds(),
		TimedOut: res.timedOut, SessionEnded: res.sessionEnded, ShellRestarted: res.shellRestarted,
	})
}
