package api

import (
	"net/http"
	"regexp"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// The handlers of /v1/keys, /v1/teams and /v1/audit. An admin key of the
// default team administers everything; an admin key of another team only
// its own team's keys and audit log (isRoot). Another team's key or team
// is not found, as another team's sandbox is.

func (s *Server) tenancyOn() (*Tenancy, error) {
	if s.tenancy == nil {
		return nil, errdefs.Unavailable(wire.CodeTeamsUnavailable, "this daemon runs without API keys and teams")
	}
	return s.tenancy, nil
}

func principalOf(r *http.Request) auth.Principal {
	p, _ := auth.FromContext(r.Context())
	return p
}

func (s *Server) createKey(w http.ResponseWriter, r *http.Request) error {
	t, err := s.tenancyOn()
	if err != nil {
		return err
	}
	var req wire.CreateKeyRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	p := principalOf(r)
	if req.Team != "" && req.Team != p.Team && !isRoot(p) {
		return errdefs.NotFound(wire.CodeTeamNotFound, "team %q not found", req.Team)
	}
	k, err := t.Keys.Create(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, k)
	return nil
}

func (s *Server) listKeys(w http.ResponseWriter, r *http.Request) error {
	t, err := s.tenancyOn()
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t.Keys.List(s.visibleTeam(r)))
	return nil
}

func (s *Server) revokeKey(w http.ResponseWriter, r *http.Request) error {
	t, err := s.tenancyOn()
	if err != nil {
		return err
	}
	id := r.PathValue("key")
	p := principalOf(r)
	if !isRoot(p) && !ownsKey(t.Keys.List(p.Team), id) {
		return errdefs.NotFound(wire.CodeKeyNotFound, "key %q not found", id)
	}
	k, err := t.Keys.Revoke(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, k)
	return nil
}

func ownsKey(keys []wire.APIKey, id string) bool {
	for _, k := range keys {
		if k.ID == id {
			return true
		}
	}
	return false
}

// visibleTeam is the team whose keys and audit entries r may list: every
// team ("") for the root admin, else its own.
func (s *Server) visibleTeam(r *http.Request) string {
	p := principalOf(r)
	if isRoot(p) {
		return r.URL.Query().Get("team")
	}
	return p.Team
}

var teamIDRe = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

func (s *Server) createTeam(w http.ResponseWriter, r *http.Request) error {
	t, err := s.tenancyOn()
	if err != nil {
		return err
	}
	if err := rootOnly(r, ""); err != nil {
		return err
	}
	var req wire.CreateTeamRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if !teamIDRe.MatchString(req.ID) {
		return errdefs.Invalid(wire.CodeInvalidTeam, "team id %q must be 1 to 63 lowercase letters, digits and dashes, starting with a letter or digit", req.ID)
	}
	if err := checkQuotas(req.Quotas); err != nil {
		return err
	}
	team := &store.Team{ID: req.ID, Quotas: req.Quotas}
	if err := t.Teams.CreateTeam(r.Context(), team); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, toTeam(team))
	return nil
}

func checkQuotas(q wire.Quotas) error {
	if q.MaxSandboxes < 0 || q.MaxRunning < 0 || q.CPU < 0 || q.MemoryMiB < 0 || q.DiskMiB < 0 || q.MaxSnapshots < 0 {
		return errdefs.Invalid(wire.CodeInvalidTeam, "quotas must be 0 (no limit) or more")
	}
	return nil
}

// rootOnly refuses r unless its key is the root admin: another team (id)
// is not found, the key's own team or none is forbidden (a team's admin
// may not make teams nor raise its own quotas).
func rootOnly(r *http.Request, id string) error {
	p := principalOf(r)
	switch {
	case isRoot(p):
		return nil
	case id != "" && id != p.Team:
		return errdefs.NotFound(wire.CodeTeamNotFound, "team %q not found", id)
	}
	return errdefs.Forbidden(wire.CodeMissingScope, "only an admin key of team %q manages teams and quotas", auth.DefaultTeam)
}

func toTeam(t *store.Team) wire.Team {
	return wire.Team{ID: t.ID, Quotas: t.Quotas, CreatedAt: t.CreatedAt}
}

func (s *Server) listTeams(w http.ResponseWriter, r *http.Request) error {
	t, err := s.tenancyOn()
	if err != nil {
		return err
	}
	teams, err := t.Teams.ListTeams(r.Context())
	if err != nil {
		return err
	}
	out := []wire.Team{}
	for _, tm := range teams {
		if p := principalOf(r); isRoot(p) || tm.ID == p.Team {
			out = append(out, toTeam(tm))
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// ownTeam is the team in r's path, if r's key may see it.
func (s *Server) ownTeam(r *http.Request) (*Tenancy, string, error) {
	t, err := s.tenancyOn()
	if err != nil {
		return nil, "", err
	}
	id := r.PathValue("team")
	if p := principalOf(r); p.Team != id && !isRoot(p) {
		return nil, "", errdefs.NotFound(wire.CodeTeamNotFound, "team %q not found", id)
	}
	return t, id, nil
}

// rootTeam is ownTeam for what only a root admin key may do: the tenancy
// and the {team} of the path, once rootOnly lets the caller through.
func (s *Server) rootTeam(r *http.Request) (*Tenancy, string, error) {
	t, err := s.tenancyOn()
	if err != nil {
		return nil, "", err
	}
	id := r.PathValue("team")
	if err := rootOnly(r, id); err != nil {
		return nil, "", err
	}
	return t, id, nil
}

func (s *Server) getTeam(w http.ResponseWriter, r *http.Request) error {
	t, id, err := s.ownTeam(r)
	if err != nil {
		return err
	}
	team, err := t.Teams.GetTeam(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toTeam(team))
	return nil
}

func (s *Server) teamUsage(w http.ResponseWriter, r *http.Request) error {
	t, id, err := s.ownTeam(r)
	if err != nil {
		return err
	}
	u, err := t.Teams.Usage(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, u)
	return nil
}

func (s *Server) setQuotas(w http.ResponseWriter, r *http.Request) error {
	t, id, err := s.rootTeam(r)
	if err != nil {
		return err
	}
	var q wire.Quotas
	if err := decodeJSON(w, r, &q); err != nil {
		return err
	}
	if err := checkQuotas(q); err != nil {
		return err
	}
	if err := t.Teams.SetQuotas(r.Context(), id, q); err != nil {
		return err
	}
	team, err := t.Teams.GetTeam(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toTeam(team))
	return nil
}

func (s *Server) deleteTeam(w http.ResponseWriter, r *http.Request) error {
	t, id, err := s.rootTeam(r)
	if err != nil {
		return err
	}
	if id == auth.DefaultTeam {
		return errdefs.Conflict(wire.CodeTeamNotEmpty, "the default team cannot be deleted")
	}
	if err := t.Teams.DeleteTeam(r.Context(), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) listAudit(w http.ResponseWriter, r *http.Request) error {
	_, err := s.tenancyOn()
	if err != nil {
		return err
	}
	if s.gate.Audit == nil {
		return errdefs.Unavailable(wire.CodeTeamsUnavailable, "this daemon keeps no audit log")
	}
	after, err := intParam(r.URL.Query().Get("after"), "after", 0, 1<<62)
	if err != nil {
		return err
	}
	limit, err := intParam(r.URL.Query().Get("limit"), "limit", 0, 10000)
	if err != nil {
		return err
	}
	entries, err := s.gate.Audit.List(r.Context(), s.visibleTeam(r), after, int(limit))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, entries)
	return nil
}

func (s *Server) setTeamWebhook(w http.ResponseWriter, r *http.Request) error {
	t, id, err := s.rootTeam(r)
	if err != nil {
		return err
	}
	var req wire.TeamWebhook
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if t.Webhooks == nil {
		return errdefs.Unavailable(wire.CodeTeamsUnavailable, "this daemon sends no webhooks per team")
	}
	if err := t.Webhooks.Set(r.Context(), id, req.URL, req.Secret); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.TeamWebhook{URL: req.URL})
	return nil
}

func (s *Server) deleteTeamWebhook(w http.ResponseWriter, r *http.Request) error {
	t, id, err := s.rootTeam(r)
	if err != nil {
		return err
	}
	if t.Webhooks == nil {
		return errdefs.Unavailable(wire.CodeTeamsUnavailable, "this daemon sends no webhooks per team")
	}
	if err := t.Webhooks.Delete(r.Context(), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
