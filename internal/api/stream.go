package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/wire"
)

// errorEvent is the "error" event the daemon adds to a stream it relays.
// Its shape decodes as wire.ExecEvent, wire.RunEvent and the other events.
type errorEvent struct {
	Type  string         `json:"type"`
	Error wire.ErrorBody `json:"error"`
}

// relay copies an agent's NDJSON stream to the client line by line. A
// stream that ends before one of its final events (the instance died) gets
// an INSTANCE_LOST error event, naming why the instance ended as lost says,
// and a line over maxLine a STREAM_LINE_TOO_LONG one, so a client never
// mistakes either for the end.
func relay(w http.ResponseWriter, r *http.Request, body io.Reader, final agentapi.Final, maxLine int, lost func() wire.ErrorBody) {
	out := agentapi.NewWriter(w)
	in := agentapi.NewReader(body, maxLine)
	ended := false
	for {
		line, err := in.Next()
		if err == nil {
			ended = ended || final[agentapi.EventType(line)]
			if !out.SendLine(line) {
				return
			}
			continue
		}
		if r.Context().Err() != nil {
			return // the client left; nobody to tell
		}
		switch {
		case errors.Is(err, agentapi.ErrLineTooLong):
			out.Send(errorEvent{Type: agentapi.EventError, Error: wire.ErrorBody{Code: wire.CodeStreamLineTooLong,
				Message: fmt.Sprintf("the sandbox sent a stream line longer than %d bytes; the stream was cut there", maxLine)}})
		case !ended:
			out.Send(errorEvent{Type: agentapi.EventError, Error: lost()})
		}
		return
	}
}

// instanceEndWait bounds how long a broken stream waits for the Manager to
// record why its instance ended: a crash is noticed by the instance's
// monitor moments after the agent's socket closes.
const instanceEndWait = 5 * time.Second

// instanceLost is the error event of a stream whose instance went away,
// with the reason the Manager recorded for it if it does so in time.
func (s *Server) instanceLost(ctx context.Context, id string) wire.ErrorBody {
	e := wire.ErrorBody{Code: wire.CodeInstanceLost,
		Message: "the stream from the sandbox broke off before its end: the instance stopped or crashed"}
	if state, reason := s.sandboxes.InstanceEnd(ctx, id, instanceEndWait); reason != "" {
		e.Reason = reason
		e.Message = fmt.Sprintf("the stream from the sandbox broke off before its end: the instance ended (%s, reason %s)", state, reason)
	}
	return e
}
