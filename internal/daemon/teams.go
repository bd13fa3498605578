package daemon

import (
	"context"
	"time"

	"github.com/sbxhq/sbx/internal/api"
	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/auth/keys"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// TeamsConfig sets the per-key rate limit and the audit log's retention.
type TeamsConfig struct {
	RateLimit      float64 // requests a second per key; 0: no limit
	RateBurst      int
	AuditRetention time.Duration // 0: forever
}

// startTeams makes the key service (the admin token stays the bootstrap
// key) and the API's tenancy: teams, quotas, rate limits, audit log.
func startTeams(ctx context.Context, cfg TeamsConfig, st *store.SQLite, admin auth.AdminToken, hooks *teamHooks) (*keys.Service, api.Tenancy, error) {
	svc, err := keys.New(ctx, st, admin)
	if err != nil {
		return nil, api.Tenancy{}, err
	}
	gate := &authz.Gate{ // every surface's way in (internal/authz)
		Keys:      svc,
		Limits:    auth.NewRateLimits(cfg.RateLimit, cfg.RateBurst),
		Audit:     authz.NewAuditLog(st, cfg.AuditRetention),
		RequestID: api.RequestID,
	}
	return svc, api.Tenancy{Keys: svc, Teams: st, Gate: gate, Webhooks: hooks}, nil
}

// teamUsages reads every team's usage for the metrics; nil for a store
// without teams.
func teamUsages(st store.Store) func(ctx context.Context) ([]wire.TeamUsage, error) {
	ts, ok := st.(store.TeamStore)
	if !ok {
		return nil
	}
	return func(ctx context.Context) ([]wire.TeamUsage, error) {
		teams, err := ts.ListTeams(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]wire.TeamUsage, 0, len(teams))
		for _, t := range teams {
			u, err := ts.Usage(ctx, t.ID)
			if err != nil {
				return nil, err
			}
			out = append(out, u)
		}
		return out, nil
	}
}
