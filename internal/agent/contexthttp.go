package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// HTTP handlers for code contexts and stateless runs:
//
//	POST   /contexts                 create → 201 wire.Context
//	GET    /contexts                 list
//	GET    /contexts/{cid}           describe
//	DELETE /contexts/{cid}           end → 204
//	POST   /contexts/{cid}/run       run code → wire.RunResult, or NDJSON RunEvents with ?stream=true
//	POST   /run                      stateless run, same answers

func (s *server) handleCreateContext(w http.ResponseWriter, r *http.Request) {
	var req wire.CreateContextRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	c, err := s.newContext(r.Context(), req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, c.info())
}

// newContext starts a context and adds it to the live ones.
func (s *server) newContext(ctx context.Context, req wire.CreateContextRequest) (*codeContext, error) {
	spec, err := s.prepareContext(req.Language, req.Cwd, req.Env, req.IdleSeconds)
	if err != nil {
		return nil, err
	}
	c, err := s.startContext(ctx, spec)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.onGone = func() { s.contexts.remove(c.id) }
	c.mu.Unlock()
	s.contexts.add(c)
	if c.isDead() { // it died before onGone was set
		s.contexts.remove(c.id)
	}
	return c, nil
}

func (s *server) handleListContexts(w http.ResponseWriter, r *http.Request) {
	out := []wire.Context{}
	for _, c := range s.contexts.list() {
		out = append(out, c.info())
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *server) handleGetContext(w http.ResponseWriter, r *http.Request) {
	c, err := s.contexts.get(r.PathValue("cid"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, c.info())
}

func (s *server) handleDeleteContext(w http.ResponseWriter, r *http.Request) {
	c, err := s.contexts.get(r.PathValue("cid"))
	if err != nil {
		writeError(w, err)
		return
	}
	c.kill()
	t := time.NewTimer(killWait)
	defer t.Stop()
	select {
	case <-c.dead:
	case <-t.C: // stuck in the kernel; it leaves the list when it goes
	}
	s.contexts.remove(c.id)
	w.WriteHeader(http.StatusNoContent)
}

func (s *server) handleRunContext(w http.ResponseWriter, r *http.Request) {
	stream, err := streamParam(r)
	if err != nil {
		writeError(w, err)
		return
	}
	var req wire.RunCodeRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	timeout, err := runTimeout(req.TimeoutSeconds)
	if err != nil {
		writeError(w, err)
		return
	}
	c, err := s.contexts.get(r.PathValue("cid"))
	if err != nil {
		writeError(w, err)
		return
	}
	if err := checkCode(c.lang, req.Code, req.Env); err != nil {
		writeError(w, err)
		return
	}
	s.serveRun(w, stream, func(out runOutput) (wire.RunResult, error) {
		return c.run(r.Context(), req.Code, req.Env, timeout, out)
	})
}

func (s *server) handleRun(w http.ResponseWriter, r *http.Request) {
	stream, err := streamParam(r)
	if err != nil {
		writeError(w, err)
		return
	}
	var req wire.RunRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	timeout, err := runTimeout(req.TimeoutSeconds)
	if err != nil {
		writeError(w, err)
		return
	}
	run, err := s.prepareStateless(&req, timeout)
	if err != nil {
		writeError(w, err)
		return
	}
	s.serveRun(w, stream, func(out runOutput) (wire.RunResult, error) { return run(r.Context(), out) })
}

// prepareStateless validates a stateless run and returns the function that
// does it: a fresh driver for a language that has one (so rich results work
// as in a context), else one plain process.
func (s *server) prepareStateless(req *wire.RunRequest, timeout time.Duration) (func(context.Context, runOutput) (wire.RunResult, error), error) {
	if l := languages[req.Language]; l == nil || l.once == nil {
		spec, err := s.prepareContext(req.Language, req.Cwd, req.Env, new(int))
		if err != nil {
			return nil, err
		}
		if err := checkCode(spec.lang, req.Code, nil); err != nil {
			return nil, err
		}
		return func(ctx context.Context, out runOutput) (wire.RunResult, error) {
			begin := time.Now()
			c, err := s.startContext(ctx, spec)
			if err != nil {
				return wire.RunResult{}, err
			}
			defer c.kill()
			res, err := c.run(ctx, req.Code, nil, timeout, out)
			res.DurationMs = time.Since(begin).Milliseconds()
			return res, err
		}, nil
	}
	// A stateless-only language: its interpreter runs the code once, like exec.
	c, err := s.prepare(&wire.ExecRequest{Cmd: []string{"true"}, Cwd: req.Cwd, Env: req.Env})
	if err != nil {
		return nil, err
	}
	l, bin, err := lookupLanguage(req.Language, false, c.dir, c.env)
	if err != nil {
		return nil, err
	}
	if err := checkCode(l, req.Code, nil); err != nil {
		return nil, err
	}
	c.path, c.argv, c.timeout = bin, l.once(bin, req.Code), timeout
	return func(ctx context.Context, out runOutput) (wire.RunResult, error) {
		out.begin()
		ex, err := s.runExec(ctx, c, execToRun{out})
		if err != nil {
			return wire.RunResult{}, err
		}
		res := wire.RunResult{Results: []wire.CodeResult{}, TimedOut: ex.TimedOut, DurationMs: ex.DurationMs}
		switch {
		case ex.Signal != "":
			res.Error = &wire.CodeError{Name: "ExitError", Value: "killed by " + ex.Signal}
		case ex.ExitCode != 0:
			res.Error = &wire.CodeError{Name: "ExitError", Value: fmt.Sprintf("exit status %d", ex.ExitCode)}
		}
		return res, nil
	}, nil
}

// execToRun adapts a run's output to runExec.
type execToRun struct{ out runOutput }

func (e execToRun) started(int)                   {}
func (e execToRun) write(stream string, p []byte) { e.out.write(stream, p) }

func streamParam(r *http.Request) (bool, error) {
	v := r.URL.Query().Get("stream")
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, errdefs.Invalid(wire.CodeInvalidParameter, "stream must be true or false, got %q", v)
	}
	return b, nil
}

// serveRun answers with the whole result, or streams it as RunEvents.
func (s *server) serveRun(w http.ResponseWriter, stream bool, run func(runOutput) (wire.RunResult, error)) {
	if stream {
		out := &runStream{w: w, rc: http.NewResponseController(w), enc: json.NewEncoder(w)}
		res, err := run(out)
		if err != nil && !out.begun {
			writeError(w, err)
			return
		}
		out.finish(res)
		return
	}
	out := &runCollector{collected: collected{stdout: capBuffer{limit: s.outputLimit}, stderr: capBuffer{limit: s.outputLimit}}}
	res, err := run(out)
	if err != nil {
		writeError(w, err)
		return
	}
	res.Stdout, res.Stderr = out.stdout.String(), out.stderr.String()
	res.Truncated = out.stdout.truncated || out.stderr.truncated
	writeJSON(w, http.StatusOK, res)
}

// runCollector keeps a run's output for a single JSON answer; results are
// in the RunResult already.
type runCollector struct{ collected }

func (c *runCollector) begin()                 {}
func (c *runCollector) result(wire.CodeResult) {}

// runStream writes RunEvents as NDJSON, flushing each, with heartbeats in
// silences, like an exec stream.
type runStream struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	enc *json.Encoder

	mu        sync.Mutex
	begun     bool
	done      bool
	seq       int64
	heartbeat *time.Timer
}

func (e *runStream) begin() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.w.Header().Set("Content-Type", "application/x-ndjson")
	e.w.WriteHeader(http.StatusOK)
	e.begun = true
	e.rc.Flush()
	e.heartbeat = time.AfterFunc(heartbeatInterval, func() { e.send(wire.RunEvent{Type: "heartbeat"}) })
}

func (e *runStream) write(stream string, p []byte) { e.send(wire.RunEvent{Type: stream, Data: p}) }

func (e *runStream) result(r wire.CodeResult) { e.send(wire.RunEvent{Type: "result", Result: &r}) }

func (e *runStream) send(ev wire.RunEvent) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sendLocked(ev)
}

func (e *runStream) sendLocked(ev wire.RunEvent) {
	if e.done || !e.begun {
		return
	}
	if ev.Type == "stdout" || ev.Type == "stderr" {
		e.seq++
		ev.Seq = e.seq
	}
	e.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	e.enc.Encode(ev)
	e.rc.Flush()
	if e.heartbeat != nil {
		e.heartbeat.Reset(heartbeatInterval)
	}
}

// finish sends the code's error, if any, and the end event; nothing is
// written after it.
func (e *runStream) finish(res wire.RunResult) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if res.Error != nil {
		e.sendLocked(wire.RunEvent{Type: "error", Error: res.Error})
	}
	e.sendLocked(wire.RunEvent{Type: "end", TimedOut: res.TimedOut, DurationMs: res.DurationMs})
	e.done = true
	if e.heartbeat != nil {
		e.heartbeat.Stop()
	}
}
