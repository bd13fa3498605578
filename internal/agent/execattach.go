package agent

import (
	"bufio"
	"encoding/json"
	"net/http"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// maxAttachRequest bounds the JSON line that opens an exec/attach body.
const maxAttachRequest = 1 << 20

// handleExecAttach runs a command whose stdin streams in: the body is one
// line of JSON ExecRequest, then the bytes of stdin until the body ends.
// The answer is the NDJSON event stream of a streamed exec, written as the
// output comes, both ways at once. A slow reader slows the command (its
// pipes fill) instead of losing output, which is what the SSH gateway
// needs for `ssh box 'tar c dir' > dir.tar` and for editors' installers.
// The command is killed when the request ends.
func (s *server) handleExecAttach(w http.ResponseWriter, r *http.Request) {
	br := bufio.NewReaderSize(r.Body, 64<<10)
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		line = append(line, part...)
		if err == nil {
			break
		}
		if err != bufio.ErrBufferFull || len(line) > maxAttachRequest {
			writeError(w, errdefs.Invalid(wire.CodeInvalidJSON, "the body must start with one line of JSON (an ExecRequest) of at most %d bytes", maxAttachRequest))
			return
		}
	}
	var req wire.ExecRequest
	if err := json.Unmarshal(line, &req); err != nil {
		writeError(w, errdefs.Invalid(wire.CodeInvalidJSON, "the first line must be a JSON ExecRequest: %v", err))
		return
	}
	if req.Stdin != "" {
		writeError(w, errdefs.Invalid(wire.CodeInvalidExec, "stdin comes after the first line, not in it"))
		return
	}
	c, err := s.prepare(&req)
	if err != nil {
		writeError(w, err)
		return
	}
	c.stdinStream, c.stdinDone = br, make(chan struct{})
	// The body may still be arriving when the command ends: this
	// connection is not reused, or its rest would be read as a request.
	w.Header().Set("Connection", "close")
	rc := http.NewResponseController(w)
	rc.EnableFullDuplex()
	s.execStream(w, r, c)
	// Let the client finish its body (a command that ignores stdin ends
	// before the client's EOF arrives) so closing the connection does not
	// fail its write before it has read the answer; a client that keeps
	// stdin open is cut after attachDrain.
	rc.SetReadDeadline(time.Now().Add(attachDrain))
	select {
	case <-c.stdinDone:
	case <-time.After(attachDrain):
	}
}

// attachDrain is how long exec/attach waits for the rest of the body after
// the command ended.
const attachDrain = 200 * time.Millisecond
