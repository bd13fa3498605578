package store

import (
	"context"
	"errors"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
)

// ErrNoScope is the cause of the error a team-scoped store call gives when
// its context carries neither a principal nor a system scope
// (auth.System): the store fails closed instead of answering for every team.
var ErrNoScope = errors.New("store call without a principal or a system scope")

// teamOf is the team whose records a request may see: the team of the
// principal in ctx (scoped true). The bootstrap admin key and the daemon's
// own work under auth.System see every team's records (scoped false). A
// context with neither is refused.
//
// Scoping here, in the one place every lookup goes through, means no
// Manager method (nor a compat layer, nor the SSH gateway) can forget it:
// another team's sandbox is simply not found.
func teamOf(ctx context.Context) (team string, scoped bool, err error) {
	if p, ok := auth.FromContext(ctx); ok {
		if p.AllTeams() {
			return "", false, nil
		}
		return p.Team, true, nil
	}
	if _, ok := auth.SystemReason(ctx); ok {
		return "", false, nil
	}
	return "", false, errdefs.Internal(ErrNoScope, "refused a store call made without a principal")
}

// teamFor is the team a new record made under ctx belongs to: the given
// one, else the caller's, else (the admin key, system work) the default
// team. A context with neither a principal nor a system scope is refused,
// and so is a team key naming another team.
func teamFor(ctx context.Context, given string) (string, error) {
	own, scoped, err := teamOf(ctx)
	if err != nil {
		return "", err
	}
	if scoped && given != "" && given != own {
		// A team's key never writes or reads another team's records by
		// naming it; only the admin key and system work may.
		return "", errdefs.Internal(nil, "a store call under a key of team %q named team %q", own, given)
	}
	if given != "" {
		return given, nil
	}
	return auth.TeamOf(ctx), nil
}

// teamClause restricts a query to ctx's team: " AND <col> = ?" with its
// argument, or nothing for the admin key and system work.
func teamClause(ctx context.Context, col string) (string, []any, error) {
	t, ok, err := teamOf(ctx)
	if ok {
		return " AND " + col + " = ?", []any{t}, nil
	}
	return "", nil, err
}
