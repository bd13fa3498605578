package ui

import (
	"net/http"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/sdk"
)

// needScope refuses a key without scope, as the API would.
func needScope(w http.ResponseWriter, p auth.Principal, scope auth.Scope) bool {
	if p.Has(scope) {
		return true
	}
	httpjson.WriteError(w, errdefs.Forbidden(sdk.CodeMissingScope, "this API key lacks the scope %q that this page needs", scope))
	return false
}

// StatsHistory answers GET /ui/stats/{id}.
type StatsHistory struct {
	ID           string   `json:"id"`
	EverySeconds int      `json:"everySeconds"`
	Samples      []Sample `json:"samples"`
}

// latestStats answers the newest sample of every sandbox the session's key
// sees, by id: the sandboxes table's CPU and memory columns.
func (u *UI) latestStats(w http.ResponseWriter, r *http.Request, _ *session, p auth.Principal) {
	if !needScope(w, p, auth.ScopeSandboxesRead) {
		return
	}
	list, err := u.cfg.Sandboxes.List(auth.WithPrincipal(r.Context(), p), store.Filter{})
	if err != nil {
		httpjson.WriteError(w, err)
		return
	}
	out := map[string]Sample{}
	for _, sb := range list {
		if s, ok := u.history.Latest(sb.ID); ok {
			out[sb.ID] = s
		}
	}
	httpjson.Write(w, http.StatusOK, out)
}

// statsHistory answers one sandbox's samples; the Manager's lookup under
// the session's principal keeps other teams' sandboxes out (404).
func (u *UI) statsHistory(w http.ResponseWriter, r *http.Request, _ *session, p auth.Principal) {
	if !needScope(w, p, auth.ScopeSandboxesRead) {
		return
	}
	sb, err := u.cfg.Sandboxes.Get(auth.WithPrincipal(r.Context(), p), r.PathValue("id"))
	if err != nil {
		httpjson.WriteError(w, err)
		return
	}
	samples := u.history.Samples(sb.ID)
	if samples == nil {
		samples = []Sample{}
	}
	httpjson.Write(w, http.StatusOK, StatsHistory{ID: sb.ID, EverySeconds: int(u.history.Every().Seconds()), Samples: samples})
}
