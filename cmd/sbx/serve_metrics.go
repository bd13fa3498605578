package main

import (
	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/internal/daemon"
)

// metricsFlags are the flags of sbx serve that say how /metrics is served.
type metricsFlags struct {
	token, listen string
	perSandbox    bool
}

func (f *metricsFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.token, "metrics-token", "", "a read-only key for GET /metrics on the API address, besides the admin key (env SBX_METRICS_TOKEN)")
	cmd.Flags().StringVar(&f.listen, "metrics-listen", "", "also serve GET /metrics WITHOUT a key on this address, e.g. 127.0.0.1:9423 (env SBX_METRICS_LISTEN)")
	cmd.Flags().BoolVar(&f.perSandbox, "metrics-per-sandbox", true, "include per-sandbox CPU, memory, pids, disk and network series in /metrics")
}

func (f *metricsFlags) apply(cmd *cobra.Command, cfg *daemon.Config) {
	cfg.Metrics = daemon.MetricsConfig{
		Token:        setting(cmd, "metrics-token", f.token, "SBX_METRICS_TOKEN"),
		Listen:       setting(cmd, "metrics-listen", f.listen, "SBX_METRICS_LISTEN"),
		NoPerSandbox: !f.perSandbox,
	}
}
