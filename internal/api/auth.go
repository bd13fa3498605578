package api

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/sdk"
)

// Keys is the API key service (internal/auth/keys).
type Keys interface {
	Create(ctx context.Context, req sdk.CreateKeyRequest) (sdk.CreatedKey, error)
	List(team string) []sdk.APIKey
	Revoke(ctx context.Context, id string) (sdk.APIKey, error)
}

// Tenancy turns on keys, teams, quotas, rate limits and the audit log
// (auth_routes.go). Without it only the bootstrap key works and the
// /v1/keys, /v1/teams and /v1/audit routes answer 503.
type Tenancy struct {
	Keys     Keys
	Teams    store.TeamStore
	Audit    *AuditLog        // nil: no audit log
	Limits   *auth.RateLimits // nil: no rate limits
	Webhooks TeamWebhooks     // nil: no webhooks per team
}

// TeamWebhooks sets where a team's events go (internal/daemon/teamhooks.go).
type TeamWebhooks interface {
	Set(ctx context.Context, team, url, secret string) error
	Delete(ctx context.Context, team string) error
}

// SetTenancy turns tenancy on; call it before serving.
func (s *Server) SetTenancy(t Tenancy) { s.tenancy = &t }

// authenticate lets a request of route rt through with its principal in
// the context: the key must be valid, hold rt's scope and be within its
// rate limit. A mutating request is written to the audit log.
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
		if s.tenancy != nil && p.KeyID != auth.Admin.KeyID {
			if wait, err := s.tenancy.Limits.Allow(p.KeyID); err != nil {
				w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
				writeError(w, r, err)
				return
			}
		}
		if mutating && s.tenancy != nil && s.tenancy.Audit != nil {
			aw := &auditWriter{ResponseWriter: w}
			defer func() { s.tenancy.Audit.Record(r, p, aw) }()
			w = aw
		}
		if !allowed(p, rt.scope) {
			writeError(w, r, missingScope(rt.scope))
			return
		}
		next(w, r.WithContext(auth.WithPrincipal(r.Context(), p)))
	}
}

// isReadOnlyPost is a POST that changes nothing (it waits): not audited.
func isReadOnlyPost(rt route) bool { return rt.scope == auth.ScopeSandboxesRead }

// allowed reports whether p may use a route that needs scope. A route
// without a scope (one added without deciding) needs admin: fail closed.
func allowed(p auth.Principal, scope auth.Scope) bool {
	if scope == "" {
		scope = auth.ScopeAdmin
	}
	return p.Has(scope)
}

func missingScope(scope auth.Scope) error {
	if scope == "" {
		scope = auth.ScopeAdmin
	}
	return errdefs.Forbidden(sdk.CodeMissingScope, "this API key lacks the scope %q that this request needs; make a key with it (sbx key create --scope %s)", scope, scope)
}

// isRoot reports whether p administers the whole installation: an admin
// key of the default team. An admin key of another team administers only
// its own team (its keys, usage and audit log).
func isRoot(p auth.Principal) bool { return p.Has(auth.ScopeAdmin) && p.Team == auth.DefaultTeam }

// tenancyCodes are the codes keys, scopes, rate limits and quotas add to
// rt's (codes.go).
func tenancyCodes(rt route) []sdk.Code {
	var codes []sdk.Code
	if !rt.public || rt.scope != "" {
		codes = append(codes, sdk.CodeMissingScope, sdk.CodeRateLimited)
	}
	switch rt.method + " " + rt.pattern {
	case "POST /v1/sandboxes", "PUT /v1/sandboxes/{id}", "POST /v1/sandboxes/{id}/fork":
		codes = append(codes, sdk.CodeQuotaSandboxes, sdk.CodeQuotaRunning, sdk.CodeQuotaCPU, sdk.CodeQuotaMemory, sdk.CodeQuotaDisk, sdk.CodeTeamNotFound)
	case "POST /v1/sandboxes/{id}/start":
		codes = append(codes, sdk.CodeQuotaRunning)
	case "POST /v1/sandboxes/{id}/snapshots":
		codes = append(codes, sdk.CodeQuotaSnapshots)
	case "POST /v1/keys":
		codes = append(codes, sdk.CodeInvalidKey, sdk.CodeTeamNotFound)
	case "DELETE /v1/keys/{key}":
		codes = append(codes, sdk.CodeKeyNotFound)
	case "POST /v1/teams":
		codes = append(codes, sdk.CodeInvalidTeam, sdk.CodeTeamExists)
	case "GET /v1/teams/{team}", "GET /v1/teams/{team}/usage", "PUT /v1/teams/{team}/quotas":
		codes = append(codes, sdk.CodeTeamNotFound, sdk.CodeInvalidTeam)
	case "DELETE /v1/teams/{team}":
		codes = append(codes, sdk.CodeTeamNotFound, sdk.CodeTeamNotEmpty)
	case "PUT /v1/teams/{team}/webhook":
		codes = append(codes, sdk.CodeTeamNotFound, sdk.CodeInvalidTeam)
	case "DELETE /v1/teams/{team}/webhook":
		codes = append(codes, sdk.CodeTeamNotFound, sdk.CodeWebhookNotFound)
	}
	if strings.HasPrefix(rt.pattern, "/v1/keys") || strings.HasPrefix(rt.pattern, "/v1/teams") || rt.pattern == "/v1/audit" {
		codes = append(codes, sdk.CodeTeamsUnavailable)
	}
	return codes
}
