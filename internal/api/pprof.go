package api

import (
	"net/http"
	"net/http/pprof"
	"os"
	"runtime"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// /debug/pprof/ serves the daemon's Go profiles (net/http/pprof) to the
// operator's admin key only: a profile shows every team's work, so a
// team's admin key is refused. Outside the route table: not part of the
// API document.
func (s *Server) mountPprof() {
	// The block and mutex profiles are empty unless sampling is on; it costs
	// every lock and channel operation a little, so only when asked for.
	if os.Getenv("SBX_PROFILE_CONTENTION") == "1" {
		runtime.SetBlockProfileRate(10_000) // one event per 10 µs blocked
		runtime.SetMutexProfileFraction(10)
	}
	s.mux.Handle("/debug/pprof/", adapt(func(w http.ResponseWriter, r *http.Request) error {
		p, err := s.principal(r)
		if err != nil {
			return err
		}
		if !p.AllTeams() {
			return errdefs.Forbidden(wire.CodeMissingScope, "/debug/pprof/ is for the operator's admin key (<data-dir>/admin.token)")
		}
		switch r.URL.Path {
		case "/debug/pprof/profile":
			pprof.Profile(w, r)
		case "/debug/pprof/trace":
			pprof.Trace(w, r)
		case "/debug/pprof/symbol":
			pprof.Symbol(w, r)
		case "/debug/pprof/cmdline":
			pprof.Cmdline(w, r)
		default:
			pprof.Index(w, r) // and the named profiles: heap, goroutine, allocs, …
		}
		return nil
	}))
}
