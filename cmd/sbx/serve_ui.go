package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/internal/daemon"
)

// uiFlags turn the dashboard at /ui on or off.
type uiFlags struct {
	on    bool
	every time.Duration
}

func (f *uiFlags) register(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.on, "ui", true, "serve the web dashboard at /ui (log in with an API key; env SBX_UI=false turns it off)")
	cmd.Flags().DurationVar(&f.every, "ui-stats-every", 10*time.Second, "how often the dashboard samples each running sandbox's CPU and memory for its one-hour charts and Daytona's getMetrics (env SBX_UI_STATS_EVERY)")
}

func (f *uiFlags) apply(cmd *cobra.Command, cfg *daemon.Config) error {
	cfg.NoUI = setting(cmd, "ui", strconv.FormatBool(f.on), "SBX_UI") == "false"
	every, err := time.ParseDuration(setting(cmd, "ui-stats-every", f.every.String(), "SBX_UI_STATS_EVERY"))
	if err != nil || every < time.Second {
		return fmt.Errorf("--ui-stats-every must be a duration of at least 1s, like 10s")
	}
	cfg.UISampleEvery = every
	return nil
}
