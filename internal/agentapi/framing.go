package agentapi

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
)

// Streams are NDJSON: one JSON object per line, each with a "type". Every
// stream of the agent ends with a final event that says why (see the Final
// sets), so a reader can tell a finished stream from a broken one.
const ContentTypeNDJSON = "application/x-ndjson"

// Event types shared by the agent's streams.
const (
	EventStart     = "start"
	EventHeartbeat = "heartbeat"
	EventExit      = "exit"  // a command or process ended (wire.ExecEvent, wire.SessionEvent)
	EventEnd       = "end"   // a run or a log ended (wire.RunEvent, wire.ExecEvent of a log)
	EventError     = "error" // the stream itself failed; nothing follows
)

// Final is a set of event types after which a stream has nothing more.
type Final map[string]bool

var (
	// ExecFinal ends an exec stream.
	ExecFinal = Final{EventExit: true, EventError: true}
	// RunFinal ends a code run: an "error" event there is the code's
	// exception, which comes before "end".
	RunFinal = Final{EventEnd: true}
	// AnyFinal ends the other streams (process logs, session commands,
	// watch).
	AnyFinal = Final{EventExit: true, EventEnd: true, EventError: true}
)

// Line limits of a reader: an event carries at most a chunk of output, but
// a run's result can carry a large image.
const (
	MaxLine    = 16 << 20
	MaxRunLine = 128 << 20
)

// ErrLineTooLong is Reader's error for a line over its limit.
var ErrLineTooLong = errors.New("a stream line is longer than the limit")

// Reader reads an NDJSON stream one line at a time.
type Reader struct{ sc *bufio.Scanner }

// NewReader reads r with lines of at most max bytes.
func NewReader(r io.Reader, max int) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(64<<10, max)), max) // the larger of the two is the limit
	return &Reader{sc: sc}
}

// Next returns the next line without its newline; the slice is valid until
// the next call. At the end of the stream it returns io.EOF; a line over
// the limit is ErrLineTooLong, and any other error is the stream's.
func (r *Reader) Next() ([]byte, error) {
	if r.sc.Scan() {
		return r.sc.Bytes(), nil
	}
	err := r.sc.Err()
	switch {
	case err == nil:
		return nil, io.EOF
	case errors.Is(err, bufio.ErrTooLong):
		return nil, ErrLineTooLong
	}
	return nil, err
}

// EventType returns the "type" of an event line, or "" if it has none.
func EventType(line []byte) string {
	var ev struct{ Type string }
	if json.Unmarshal(line, &ev) != nil {
		return ""
	}
	return ev.Type
}

// WriteHeader starts a stream answer: NDJSON, not cached, 200, flushed so
// the client sees it at once.
func WriteHeader(w http.ResponseWriter) {
	w.Header().Set("Content-Type", ContentTypeNDJSON)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	http.NewResponseController(w).Flush()
}

// Writer writes one JSON object per line and flushes each.
type Writer struct {
	w      io.Writer
	enc    *json.Encoder
	rc     *http.ResponseController
	failed bool
}

// NewWriter starts a stream answer on w (see WriteHeader).
func NewWriter(w http.ResponseWriter) *Writer {
	WriteHeader(w)
	return &Writer{w: w, enc: json.NewEncoder(w), rc: http.NewResponseController(w)}
}

// Send writes v and reports whether the client is still there; after a
// failure it sends nothing more.
func (n *Writer) Send(v any) bool {
	if n.failed {
		return false
	}
	if err := n.enc.Encode(v); err != nil {
		n.failed = true
		return false
	}
	n.rc.Flush()
	return true
}

// SendLine writes an encoded event line as it is.
func (n *Writer) SendLine(line []byte) bool {
	if n.failed {
		return false
	}
	if _, err := n.w.Write(append(line[:len(line):len(line)], '\n')); err != nil {
		n.failed = true
		return false
	}
	n.rc.Flush()
	return true
}
