package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Keys is the API key service (internal/auth/keys).
type Keys interface {
	Create(ctx context.Context, req wire.CreateKeyRequest) (wire.CreatedKey, error)
	List(team string) []wire.APIKey
	Revoke(ctx context.Context, id string) (wire.APIKey, error)
}

// Tenancy turns on keys, teams, quotas, rate limits and the audit log
// (auth_routes.go). Without it only the bootstrap key works and the
// /v1/keys, /v1/teams and /v1/audit routes answer 503.
type Tenancy struct {
	Keys     Keys
	Teams    store.TeamStore
	Gate     *authz.Gate  // the daemon's one gate: keys, rate limits, audit log
	Webhooks TeamWebhooks // nil: no webhooks per team
}

// TeamWebhooks sets where a team's events go (internal/daemon/teamhooks.go).
type TeamWebhooks interface {
	Set(ctx context.Context, team, url, secret string) error
	Delete(ctx context.Context, team string) error
}

// SetTenancy turns tenancy on; call it before serving.
func (s *Server) SetTenancy(t Tenancy) {
	s.tenancy = &t
	if t.Gate != nil {
		s.gate = t.Gate
	}
}

// authenticate lets a request of route rt through the gate (internal/authz)
// with its principal in the context: the key must be valid, hold rt's
// scope and be within its rate limit. A mutating request is audited.
//
// Per request this costs the key check (a map lookup and one SHA-256, see
// internal/auth/keys), a token-bucket take, and for mutations one entry
// queued for a batched write.
func (s *Server) authenticate(rt route, next http.HandlerFunc) http.HandlerFunc {
	mutating := rt.method != http.MethodGet && rt.method != http.MethodHead && !isReadOnlyPost(rt)
	return func(w http.ResponseWriter, r *http.Request) {
		p, err := s.principal(r)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="sbx"`)
			writeError(w, r, err)
			return
		}
		w, r, end, err := s.gate.HTTP(w, r, p, authz.Op{Method: r.Method, Path: r.URL.Path, Scope: rt.scope, Write: mutating})
		defer end()
		if err != nil {
			writeError(w, r, err)
			return
		}
		next(w, r)
	}
}

// isReadOnlyPost is a POST that changes nothing (it waits): not audited.
func isReadOnlyPost(rt route) bool { return rt.scope == auth.ScopeSandboxesRead }

// isRoot reports whether p administers the whole installation: an admin
// key of the default team. An admin key of another team administers only
// its own team (its keys, usage and audit log).
func isRoot(p auth.Principal) bool { return p.Has(auth.ScopeAdmin) && p.Team == auth.DefaultTeam }

// tenancyCodes are the codes keys, scopes, rate limits and quotas add to
// rt's (codes.go).
func tenancyCodes(rt route) []wire.Code {
	var codes []wire.Code
	if !rt.public || rt.scope != "" {
		codes = append(codes, wire.CodeMissingScope, wire.CodeRateLimited)
	}
	switch rt.method + " " + rt.pattern {
	case "POST /v1/sandboxes", "PUT /v1/sandboxes/{id}", "POST /v1/sandboxes/{id}/fork":
		codes = append(codes, wire.CodeQuotaSandboxes, wire.CodeQuotaRunning, wire.CodeQuotaCPU, wire.CodeQuotaMemory, wire.CodeQuotaDisk, wire.CodeTeamNotFound)
	case "POST /v1/sandboxes/{id}/start":
		codes = append(codes, wire.CodeQuotaRunning)
	case "POST /v1/sandboxes/{id}/snapshots":
		codes = append(codes, wire.CodeQuotaSnapshots)
	case "POST /v1/keys":
		codes = append(codes, wire.CodeInvalidKey, wire.CodeTeamNotFound)
	case "DELETE /v1/keys/{key}":
		codes = append(codes, wire.CodeKeyNotFound)
	case "POST /v1/teams":
		codes = append(codes, wire.CodeInvalidTeam, wire.CodeTeamExists)
	case "GET /v1/teams/{team}", "GET /v1/teams/{team}/usage", "PUT /v1/teams/{team}/quotas":
		codes = append(codes, wire.CodeTeamNotFound, wire.CodeInvalidTeam)
	case "DELETE /v1/teams/{team}":
		codes = append(codes, wire.CodeTeamNotFound, wire.CodeTeamNotEmpty)
	case "PUT /v1/teams/{team}/webhook":
		codes = append(codes, wire.CodeTeamNotFound, wire.CodeInvalidTeam)
	case "DELETE /v1/teams/{team}/webhook":
		codes = append(codes, wire.CodeTeamNotFound, wire.CodeWebhookNotFound)
	}
	if strings.HasPrefix(rt.pattern, "/v1/keys") || strings.HasPrefix(rt.pattern, "/v1/teams") || rt.pattern == "/v1/audit" {
		codes = append(codes, wire.CodeTeamsUnavailable)
	}
	return codes
}
