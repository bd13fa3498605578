package agent

import (
	"encoding/json"
	"github.com/sbxhq/sbx/internal/agentapi"
	"net/http"
	"sync"
	"time"

	"github.com/sbxhq/sbx/wire"
)

// ndjson writes one JSON object per line, flushing each, with a heartbeat
// after every heartbeatInterval of silence. Every stream of the toolbox
// (logs, watch, session commands) uses it; it ends with a final event that
// says why ("exit", "end" or "error"), so the daemon can tell a finished
// stream from a broken one.
type ndjson struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	enc *json.Encoder

	mu        sync.Mutex
	heartbeat *time.Timer
	done      bool
	seq       int64 // for execOutput: numbers stdout/stderr events
}

// startNDJSON sends the headers and starts the heartbeat.
func startNDJSON(w http.ResponseWriter) *ndjson {
	s := &ndjson{w: w, rc: http.NewResponseController(w), enc: json.NewEncoder(w)}
	agentapi.WriteHeader(w)
	s.mu.Lock()
	s.heartbeat = time.AfterFunc(heartbeatInterval, s.beat)
	s.mu.Unlock()
	return s
}

func (s *ndjson) beat() { s.send(wire.ExecEvent{Type: "heartbeat"}) }

// send writes v. Write errors are ignored: a client that went away cancels
// the request context, which ends the stream's producer.
func (s *ndjson) send(v any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sendLocked(v)
}

func (s *ndjson) sendLocked(v any) {
	if s.done {
		return
	}
	s.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	s.enc.Encode(v)
	s.rc.Flush()
	if s.heartbeat != nil {
		s.heartbeat.Reset(heartbeatInterval)
	}
}

// finish sends the last event; nothing is written after it.
func (s *ndjson) finish(v any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sendLocked(v)
	s.stop()
}

// stop ends the stream without a final event (the client is gone).
func (s *ndjson) stop() {
	s.done = true
	if s.heartbeat != nil {
		s.heartbeat.Stop()
	}
}

// ndjsonOutput is an execOutput that streams numbered stdout/stderr events;
// started sends the headers and a "start" event.
type ndjsonOutput struct {
	w http.ResponseWriter
	s *ndjson
}

func (o *ndjsonOutput) started(pid int) {
	o.s = startNDJSON(o.w)
	o.s.send(wire.ExecEvent{Type: "start", Pid: pid})
}

func (o *ndjsonOutput) write(stream string, p []byte) {
	o.s.mu.Lock()
	defer o.s.mu.Unlock()
	o.s.seq++
	o.s.sendLocked(wire.ExecEvent{Type: stream, Seq: o.s.seq, Data: p})
}

// streamsDone returns a channel closed when the agent begins to shut down,
// so that endless streams (watch, follow) let the HTTP server finish.
func (s *server) streamsDone() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.quit == nil {
		s.quit = make(chan struct{})
		if s.closing {
			close(s.quit)
		}
	}
	return s.quit
}

// closeStreams ends every open stream; Run calls it when shutting down.
func (s *server) closeStreams() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.quit == nil {
		s.quit = make(chan struct{})
	}
	select {
	case <-s.quit:
	default:
		close(s.quit)
	}
}
