package ui

import (
	"net/http"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/internal/store"
)

// StatsHistory answers GET /ui/stats/{id}.
type StatsHistory struct {
	ID           string   `json:"id"`
	EverySeconds int      `json:"everySeconds"`
	Samples      []Sample `json:"samples"`
}

// latestStats answers the newest sample of every sandbox the session's key
// sees, by id: the sandboxes table's CPU and memory columns.
func (u *UI) latestStats(w http.ResponseWriter, r *http.Request, _ *session, p auth.Principal) {
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
