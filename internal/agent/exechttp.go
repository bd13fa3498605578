package agent

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// heartbeatInterval is the silence after which a stream sends a heartbeat,
// so proxies and clients can tell a quiet command from a dead connection.
var heartbeatInterval = 15 * time.Second

// streamWriteTimeout bounds one event write, so a client that stops reading
// cannot hold the exec (and its output readers) forever.
const streamWriteTimeout = time.Minute

// handleExec serves POST /exec: one JSON ExecResult, or with ?stream=true an
// NDJSON stream of ExecEvents ending in exactly one "exit".
func (s *server) handleExec(w http.ResponseWriter, r *http.Request) {
	stream := false
	if v := r.URL.Query().Get("stream"); v != "" {
		var err error
		if stream, err = strconv.ParseBool(v); err != nil {
			writeError(w, errdefs.Invalid(wire.CodeInvalidParameter, "stream must be true or false, got %q", v))
			return
		}
	}
	var req wire.ExecRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	c, err := s.prepare(&req)
	if err != nil {
		writeError(w, err)
		return
	}
	if stream {
		s.execStream(w, r, c)
		return
	}
	out := &collected{stdout: capBuffer{limit: s.outputLimit}, stderr: capBuffer{limit: s.outputLimit}}
	res, err := s.runExec(r.Context(), c, out)
	if err != nil {
		writeError(w, err)
		return
	}
	res.Stdout = out.stdout.String()
	res.Stderr = out.stderr.String()
	res.Truncated = out.stdout.truncated || out.stderr.truncated
	writeJSON(w, http.StatusOK, res)
}

func (s *server) execStream(w http.ResponseWriter, r *http.Request, c *command) {
	out := &eventStream{w: w, rc: http.NewResponseController(w), enc: json.NewEncoder(w)}
	res, err := s.runExec(r.Context(), c, out)
	if err != nil { // nothing was sent yet
		writeError(w, err)
		return
	}
	out.finish(wire.ExecEvent{Type: "exit", ExitCode: res.ExitCode, Signal: res.Signal,
		TimedOut: res.TimedOut, DurationMs: res.DurationMs})
}

// collected keeps output for a non-streamed result.
type collected struct{ stdout, stderr capBuffer }

func (c *collected) started(int) {}

func (c *collected) write(stream string, p []byte) {
	if stream == "stdout" {
		c.stdout.write(p)
	} else {
		c.stderr.write(p)
	}
}

// capBuffer keeps the first limit bytes written to it.
type capBuffer struct {
	bytes.Buffer
	limit     int
	truncated bool
}

func (b *capBuffer) write(p []byte) {
	if room := b.limit - b.Len(); len(p) > room {
		p = p[:max(room, 0)]
		b.truncated = true
	}
	b.Buffer.Write(p)
}

// eventStream writes ExecEvents as NDJSON, flushing each, with a heartbeat
// after every heartbeatInterval of silence. Write errors are ignored: a
// client that went away cancels the request context, which kills the command.
type eventStream struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	enc *json.Encoder

	mu        sync.Mutex
	seq       int64
	heartbeat *time.Timer
	done      bool
}

func (e *eventStream) started(pid int) {
	e.w.Header().Set("Content-Type", "application/x-ndjson")
	e.w.WriteHeader(http.StatusOK)
	e.send(wire.ExecEvent{Type: "start", Pid: pid})
	e.mu.Lock()
	e.heartbeat = time.AfterFunc(heartbeatInterval, func() { e.send(wire.ExecEvent{Type: "heartbeat"}) })
	e.mu.Unlock()
}

func (e *eventStream) write(stream string, p []byte) {
	e.send(wire.ExecEvent{Type: stream, Data: p})
}

func (e *eventStream) send(ev wire.ExecEvent) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sendLocked(ev)
}

func (e *eventStream) sendLocked(ev wire.ExecEvent) {
	if e.done {
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

// finish sends the last event; nothing is written after it.
func (e *eventStream) finish(ev wire.ExecEvent) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sendLocked(ev)
	e.done = true
	if e.heartbeat != nil {
		e.heartbeat.Stop()
	}
}
