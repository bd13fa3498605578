// Package auth says who sent a request: an API key becomes a Principal (the
// key, its team and its scopes), carried in the request's context to every
// layer below — the API, the compatibility layers, the SSH gateway and the
// sandbox Manager all read it from there.
package auth

import (
	"context"
	"crypto/subtle"
	"slices"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Scope is a permission an API key holds.
type Scope string

// ScopeAdmin allows everything.
const ScopeAdmin Scope = "admin"

// DefaultTeam owns everything made before teams existed and everything the
// admin key makes without naming a team.
const DefaultTeam = "default"

// Principal is who a request acts for.
type Principal struct {
	KeyID  string // "admin" for the bootstrap admin key
	Team   string
	Scopes []Scope
}

// Has reports whether p holds scope s (admin holds every scope).
func (p Principal) Has(s Scope) bool {
	return slices.Contains(p.Scopes, ScopeAdmin) || slices.Contains(p.Scopes, s)
}

// AllTeams reports whether p sees every team's objects: only the bootstrap
// admin key does (the operator's key; cleanup, support). Any other key,
// admin keys included, sees its own team's only.
func (p Principal) AllTeams() bool { return p.KeyID == Admin.KeyID }

// Authenticator turns a presented API key into the principal it stands for.
type Authenticator interface {
	// Authenticate returns the key's principal, or an errdefs Unauthorized
	// error for a missing, wrong, revoked or expired key.
	Authenticate(ctx context.Context, key string) (Principal, error)
}

// AdminToken is the bootstrap admin key (<data-dir>/admin.token).
type AdminToken string

// Admin is the principal of the admin key.
var Admin = Principal{KeyID: "admin", Team: DefaultTeam, Scopes: []Scope{ScopeAdmin}}

func (t AdminToken) Authenticate(_ context.Context, key string) (Principal, error) {
	if key == "" || subtle.ConstantTimeCompare([]byte(key), []byte(t)) != 1 {
		return Principal{}, errdefs.Unauthorized(wire.CodeUnauthorized, "wrong API key")
	}
	return Admin, nil
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal ctx carries, if any.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// Sees reports whether the caller in ctx may see an object of team: the
// bootstrap admin and the daemon's own work (System) see every team; a
// context with neither a principal nor a system scope sees nothing (fail
// closed); a record without a team belongs to DefaultTeam.
func Sees(ctx context.Context, team string) bool {
	p, ok := FromContext(ctx)
	if !ok {
		_, sys := SystemReason(ctx)
		return sys
	}
	if p.AllTeams() {
		return true
	}
	if team == "" {
		team = DefaultTeam
	}
	return p.Team == team
}

// TeamOf is the team a new object made under ctx belongs to.
func TeamOf(ctx context.Context) string {
	if p, ok := FromContext(ctx); ok && p.Team != "" {
		return p.Team
	}
	return DefaultTeam
}

type systemKey struct{}

// System returns ctx acting for the daemon itself across every team, with
// any principal removed: the reconciler, idle timers, pool fill, image GC,
// metrics, checks that must count every team's objects. reason names the
// work (for greps and logs). A context with neither a principal nor this
// scope is refused by the store, so forgetting a principal never widens a
// request's view.
func System(ctx context.Context, reason string) context.Context {
	if reason == "" {
		reason = "unnamed"
	}
	return context.WithValue(context.WithValue(ctx, principalKey{}, nil), systemKey{}, reason)
}

// SystemReason reports whether ctx carries no principal and a System scope,
// and the scope's reason.
func SystemReason(ctx context.Context) (string, bool) {
	if _, ok := FromContext(ctx); ok {
		return "", false
	}
	r, ok := ctx.Value(systemKey{}).(string)
	return r, ok
}
