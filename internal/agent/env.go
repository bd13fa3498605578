package agent

import (
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// The sandbox's environment is the agent's own: every process it starts
// (exec, background processes, sessions, terminals, contexts) begins from
// os.Environ(). PATCH /env changes it for the processes started from then
// on; those already running keep theirs. The daemon records the change in
// the sandbox's spec too, so the next instance starts with it.

// envMu makes one change apply whole before the next.
var envMu sync.Mutex

func (s *server) handleSetEnv(w http.ResponseWriter, r *http.Request) {
	var change map[string]*string
	if err := decodeJSON(w, r, &change); err != nil {
		writeError(w, err)
		return
	}
	for k, v := range change {
		if k == "" || strings.ContainsAny(k, "=\x00") || v != nil && strings.ContainsRune(*v, 0) {
			writeError(w, errdefs.Invalid(wire.CodeInvalidEnv, "bad environment variable %q: names must be non-empty without '=' or NUL, values without NUL", k))
			return
		}
	}
	envMu.Lock()
	defer envMu.Unlock()
	for k, v := range change {
		if v == nil {
			os.Unsetenv(k)
		} else {
			os.Setenv(k, *v)
		}
	}
	w.WriteHeader(http.StatusNoContent)
}
