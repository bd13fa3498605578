package agent

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/wire"
)

func (s *server) handleStartProcess(w http.ResponseWriter, r *http.Request) {
	var req wire.StartProcessRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	p, err := s.startProcess(&req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, p.toAPI())
}

func (s *server) handleListProcesses(w http.ResponseWriter, r *http.Request) {
	out := []wire.Process{}
	for _, p := range s.procs.list() {
		out = append(out, p.toAPI())
	}
	writeJSON(w, http.StatusOK, out)
}

// withProcess looks up the {process} of the path.
func (s *server) withProcess(h func(http.ResponseWriter, *http.Request, *process)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("process")
		p, ok := s.procs.get(id)
		if !ok {
			writeError(w, errdefs.NotFound(wire.CodeProcessNotFound, "no process %q in this sandbox", id))
			return
		}
		h(w, r, p)
	}
}

func (s *server) handleGetProcess(w http.ResponseWriter, r *http.Request, p *process) {
	writeJSON(w, http.StatusOK, p.toAPI())
}

func (s *server) handleDeleteProcess(w http.ResponseWriter, r *http.Request, p *process) {
	p.kill()
	s.procs.remove(p)
	w.WriteHeader(http.StatusNoContent)
}

func (s *server) handleSignalProcess(w http.ResponseWriter, r *http.Request, p *process) {
	var req wire.SignalRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	sig, err := parseSignal(req.Signal)
	if err != nil {
		writeError(w, err)
		return
	}
	// The group outlives its leader while children remain, so a signal to
	// an exited process still reaches them; only an empty group is an error.
	if err := syscall.Kill(-p.pid, sig); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			writeError(w, errdefs.Conflict(wire.CodeProcessExited, "process %q has exited and left no children to signal", p.id))
			return
		}
		writeError(w, errdefs.Internal(err, "signal process group %d", p.pid))
		return
	}
	writeJSON(w, http.StatusOK, p.toAPI())
}

// timeoutParam reads ?timeoutSeconds=; 0 or absent is no limit.
func timeoutParam(r *http.Request) (time.Duration, error) {
	v := r.URL.Query().Get("timeoutSeconds")
	if v == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, errdefs.Invalid(wire.CodeInvalidTimeout, "timeoutSeconds must be a number of seconds, got %q", v)
	}
	return checkTimeout(f)
}

func checkTimeout(f float64) (time.Duration, error) {
	if f < 0 || math.IsNaN(f) || f > 1e8 {
		return 0, errdefs.Invalid(wire.CodeInvalidTimeout, "timeoutSeconds must be a number of seconds from 0 (none) to 1e8")
	}
	return time.Duration(f * float64(time.Second)), nil
}

// deadline returns a context that ends after d (never when d is 0).
func deadline(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d == 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, d, errWaitTimeout)
}

var errWaitTimeout = errors.New("wait timed out")

// waitError explains why a wait on ctx ended without its condition.
func waitError(ctx context.Context, what string, d time.Duration) error {
	if context.Cause(ctx) == errWaitTimeout {
		return errdefs.Unavailable(wire.CodeWaitTimeout, "%s: not within %s", what, d)
	}
	return errdefs.Unavailable(wire.CodeCancelled, "%s: the request was cancelled", what)
}

func (s *server) handleWaitProcess(w http.ResponseWriter, r *http.Request, p *process) {
	d, err := timeoutParam(r)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, cancel := deadline(r.Context(), d)
	defer cancel()
	select {
	case <-p.exited:
		writeJSON(w, http.StatusOK, p.toAPI())
	case <-ctx.Done():
		writeError(w, waitError(ctx, "process "+p.id+" did not exit", d))
	}
}

// handleProcessLogs streams output chunks as ExecEvents: those after
// ?offset=, then with ?follow=true new ones as they come. It ends with
// "exit" once the process has exited and everything retained was sent, or
// (without follow) with "end" while it still runs.
func (s *server) handleProcessLogs(w http.ResponseWriter, r *http.Request, p *process) {
	var after int64
	if v := r.URL.Query().Get("offset"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(w, errdefs.Invalid(wire.CodeInvalidOffset, "offset must be a sequence number of 0 or more, got %q", v))
			return
		}
		after = n
	}
	follow, err := httpjson.BoolParam(r, "follow")
	if err != nil {
		writeError(w, err)
		return
	}
	quit := s.streamsDone()
	st := startNDJSON(w)
	for {
		chunks, closed, changed := p.out.since(after)
		for _, c := range chunks {
			st.send(wire.ExecEvent{Type: c.stream, Seq: c.seq, Data: c.data})
			after = c.seq
		}
		if closed {
			p.mu.Lock()
			ev := wire.ExecEvent{Type: "exit", Seq: max(after, p.out.last()), ExitCode: p.exitCode, Signal: p.signal,
				TimedOut: p.timedOut, DurationMs: p.ended.Sub(p.started).Milliseconds()}
			p.mu.Unlock()
			st.finish(ev)
			return
		}
		if !follow {
			st.finish(wire.ExecEvent{Type: "end", Seq: max(after, p.out.last())})
			return
		}
		select {
		case <-changed:
		case <-r.Context().Done():
			st.stop()
			return
		case <-quit:
			st.finish(wire.ExecEvent{Type: "error", Error: &wire.ErrorBody{Code: wire.CodeShuttingDown, Message: "the sandbox is stopping"}})
			return
		}
	}
}

func (s *server) handleWriteStdin(w http.ResponseWriter, r *http.Request, p *process) {
	p.stdinMu.Lock()
	defer p.stdinMu.Unlock()
	if p.stdin == nil {
		if p.hasExited() {
			writeError(w, errdefs.Conflict(wire.CodeProcessExited, "process %q has exited", p.id))
		} else {
			writeError(w, errdefs.Conflict(wire.CodeStdinClosed, "the stdin of process %q was closed", p.id))
		}
		return
	}
	// A deadline per write: a process that stops reading blocks the copy.
	_, err := io.Copy(deadlineWriter{p.stdin}, r.Body)
	switch {
	case err == nil:
		w.WriteHeader(http.StatusNoContent)
	case errors.Is(err, os.ErrDeadlineExceeded):
		writeError(w, errdefs.Unavailable(wire.CodeStdinBlocked, "process %q is not reading its stdin", p.id))
	case errors.Is(err, syscall.EPIPE):
		writeError(w, errdefs.Conflict(wire.CodeStdinClosed, "process %q closed its stdin", p.id))
	default:
		writeError(w, errdefs.Invalid(wire.CodeStdinWrite, "write stdin of process %q: %v", p.id, err))
	}
}

type deadlineWriter struct{ f *os.File }

func (d deadlineWriter) Write(b []byte) (int, error) {
	d.f.SetWriteDeadline(time.Now().Add(stdinWriteTimeout))
	return d.f.Write(b)
}

func (s *server) handleCloseStdin(w http.ResponseWriter, r *http.Request, p *process) {
	p.closeStdin()
	w.WriteHeader(http.StatusNoContent)
}
