package agent

import (
	"net/http"
	"sync"

	"github.com/sbxhq/sbx/sdk"
)

// Default contexts: per language, one context that runs given no context
// of their own share, so state carries from one to the next (Daytona's
// runCode, E2B's runCode). The agent keeps which it is, so no caller
// keeps a per-sandbox note that a restart or a second host would lose.

// defaultContexts maps a language to its default context's id. The zero
// value is ready; mu is held while one is started, so two callers get one.
type defaultContexts struct {
	mu  sync.Mutex
	ids map[string]string
}

// handleDefaultContext answers the language's live default context; with
// start, it starts one when there is none (or the last one ended).
func (s *server) handleDefaultContext(start bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		lang := r.PathValue("language")
		d := &s.defaults
		d.mu.Lock()
		defer d.mu.Unlock()
		if c, err := s.contexts.get(d.ids[lang]); err == nil {
			writeJSON(w, http.StatusOK, c.info())
			return
		}
		if !start {
			writeError(w, contextNotFound("default-"+lang))
			return
		}
		c, err := s.newContext(r.Context(), sdk.CreateContextRequest{Language: lang})
		if err != nil {
			writeError(w, err)
			return
		}
		if d.ids == nil {
			d.ids = map[string]string{}
		}
		d.ids[lang] = c.id
		writeJSON(w, http.StatusCreated, c.info())
	}
}
