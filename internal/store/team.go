package store

import (
	"context"

	"github.com/sbxhq/sbx/internal/auth"
)

// teamOf is the team whose records a request may see: the team of the
// principal in ctx. A context without a principal is an internal caller
// (the scheduler, the reconciler, a background delete) and sees every
// team's records (scoped false), as does the bootstrap admin key.
//
// Scoping here, in the one place every lookup goes through, means no
// Manager method (nor a compat layer, nor the SSH gateway) can forget it:
// another team's sandbox is simply not found.
func teamOf(ctx context.Context) (team string, scoped bool) {
	p, ok := auth.FromContext(ctx)
	if !ok || p.AllTeams() {
		return "", false
	}
	return p.Team, true
}

// teamFor is the team a new record made under ctx belongs to: the given
// one, else the caller's, else the default team.
func teamFor(ctx context.Context, given string) string {
	if given != "" {
		return given
	}
	if p, ok := auth.FromContext(ctx); ok && p.Team != "" {
		return p.Team
	}
	return auth.DefaultTeam
}

// teamClause restricts a query to ctx's team: " AND <col> = ?" with its
// argument, or nothing for an internal caller.
func teamClause(ctx context.Context, col string) (string, []any) {
	if t, ok := teamOf(ctx); ok {
		return " AND " + col + " = ?", []any{t}
	}
	return "", nil
}
