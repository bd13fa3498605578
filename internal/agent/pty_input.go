package agent

import (
	"io"
	"net/http"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// maxPTYInput bounds one input request; a client types far less.
const maxPTYInput = 1 << 20

// handlePTYInput writes the body to the terminal as typed input: for
// callers that send keystrokes without holding a WebSocket (the E2B layer's
// sendInput).
func (s *server) handlePTYInput(w http.ResponseWriter, r *http.Request, term *terminal) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxPTYInput))
	if err != nil {
		writeError(w, errdefs.TooLarge(wire.CodeBodyTooLarge, "terminal input is limited to %d bytes a request", maxPTYInput))
		return
	}
	if err := term.input(b); err != nil {
		writeError(w, errdefs.Conflict(wire.CodePTYExited, "terminal %q has exited: it takes no input", term.id))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
