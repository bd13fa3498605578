package daemon

import (
	"context"
	"time"

	"github.com/sbxhq/sbx/internal/api"
	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/auth/keys"
	"github.com/sbxhq/sbx/internal/store"
)

// TeamsConfig sets the per-key rate limit and the audit log's retention.
type TeamsConfig struct {
	RateLimit      float64 // requests a second per key; 0: no limit
	RateBurst      int
	AuditRetention time.Duration // 0: forever
}

// startTeams makes the key service (the admin token stays the bootstrap
// key) and the API's tenancy: teams, quotas, rate limits, audit log.
func startTeams(ctx context.Context, cfg TeamsConfig, st *store.SQLite, admin auth.AdminToken) (*keys.Service, api.Tenancy, error) {
	svc, err := keys.New(ctx, st, admin)
	if err != nil {
		return nil, api.Tenancy{}, err
	}
	return svc, api.Tenancy{
		Keys:   svc,
		Teams:  st,
		Audit:  api.NewAuditLog(st, cfg.AuditRetention),
		Limits: auth.NewRateLimits(cfg.RateLimit, cfg.RateBurst),
	}, nil
}
