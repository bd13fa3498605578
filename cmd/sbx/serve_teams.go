package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/internal/daemon"
)

// teamsFlags are the flags of sbx serve for API keys: rate limits per key
// and how long the audit log keeps its entries.
type teamsFlags struct {
	rateLimit      float64
	rateBurst      int
	auditRetention time.Duration
}

func (f *teamsFlags) register(cmd *cobra.Command) {
	cmd.Flags().Float64Var(&f.rateLimit, "rate-limit", 100,
		"requests a second each API key may send on average (token bucket; the bootstrap admin key is exempt); over it: 429 RATE_LIMITED with Retry-After; 0 turns limits off")
	cmd.Flags().IntVar(&f.rateBurst, "rate-burst", 200, "requests an API key may send at once above --rate-limit")
	cmd.Flags().DurationVar(&f.auditRetention, "audit-retention", 90*24*time.Hour, "how long the audit log keeps an entry; 0 keeps them forever")
}

func (f *teamsFlags) apply(cfg *daemon.Config) error {
	if f.rateLimit < 0 || f.rateBurst < 0 || f.auditRetention < 0 {
		return usagef("--rate-limit, --rate-burst and --audit-retention must be 0 or more")
	}
	cfg.Teams = daemon.TeamsConfig{RateLimit: f.rateLimit, RateBurst: f.rateBurst, AuditRetention: f.auditRetention}
	return nil
}
