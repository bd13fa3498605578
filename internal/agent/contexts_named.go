package agent

import (
	"net/http"
	"sync"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Contexts by a name the caller chooses, and restarts that keep the name:
// a compat layer's default context per language lives here, in the
// instance, and not in the daemon's memory (it dies with the instance).

// namedMu serialises ensure and restart, so two callers of one name get
// one interpreter.
var namedMu sync.Mutex

// removeIf forgets c unless its id now names a newer context.
func (cs *contextSet) removeIf(c *codeContext) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.m[c.id] == c {
		delete(cs.m, c.id)
	}
}

// register adds a started context to the set; it leaves it when it dies.
func (s *server) register(c *codeContext) {
	c.mu.Lock()
	c.onGone = func() { s.contexts.removeIf(c) }
	c.mu.Unlock()
	s.contexts.add(c)
	if c.isDead() { // it died before onGone was set
		s.contexts.removeIf(c)
	}
}

// handleEnsureContext answers the live context named {cid}, or starts it
// with the body's language, cwd, env and idle time (201).
func (s *server) handleEnsureContext(w http.ResponseWriter, r *http.Request) {
	var req wire.CreateContextRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	id, err := checkID(r.PathValue("cid"), "", nil)
	if err != nil {
		writeError(w, err)
		return
	}
	namedMu.Lock()
	defer namedMu.Unlock()
	if c, err := s.contexts.get(id); err == nil {
		if c.lang.name != req.Language && req.Language != "" {
			writeError(w, errdefs.Conflict(wire.CodeContextExists, "context %q runs %s, not %s", id, c.lang.name, req.Language))
			return
		}
		writeJSON(w, http.StatusOK, c.info())
		return
	}
	spec, err := s.prepareContext(req.Language, req.Cwd, req.Env, req.IdleSeconds)
	if err != nil {
		writeError(w, err)
		return
	}
	spec.id = id
	c, err := s.startContext(r.Context(), spec)
	if err != nil {
		writeError(w, err)
		return
	}
	s.register(c)
	writeJSON(w, http.StatusCreated, c.info())
}

// handleRestartContext replaces {cid}'s interpreter with a fresh one of the
// same id, language, cwd, env and idle time: its variables are gone.
func (s *server) handleRestartContext(w http.ResponseWriter, r *http.Request) {
	namedMu.Lock()
	defer namedMu.Unlock()
	old, err := s.contexts.get(r.PathValue("cid"))
	if err != nil {
		writeError(w, err)
		return
	}
	old.mu.Lock()
	spec := *old.spec
	old.onGone = func() { s.contexts.removeIf(old) }
	old.mu.Unlock()
	spec.id = old.id
	old.kill()
	t := time.NewTimer(killWait)
	defer t.Stop()
	select {
	case <-old.dead:
	case <-t.C: // stuck in the kernel: the new one replaces it in the set
	}
	c, err := s.startContext(r.Context(), &spec)
	if err != nil {
		s.contexts.removeIf(old)
		writeError(w, err)
		return
	}
	s.register(c)
	writeJSON(w, http.StatusOK, c.info())
}
