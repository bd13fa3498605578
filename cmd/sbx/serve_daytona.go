package main

import (
	"strconv"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/internal/daemon"
)

// daytonaFlags turn Daytona's API (/daytona/api, /daytona/toolbox) on or off.
type daytonaFlags struct{ on bool }

func (f *daytonaFlags) register(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.on, "daytona", true, "serve Daytona's API at /daytona/api so Daytona's SDKs work with apiUrl http://<listen>/daytona/api and an sbx API key (env SBX_DAYTONA=false turns it off)")
}

func (f *daytonaFlags) apply(cmd *cobra.Command, cfg *daemon.Config) {
	cfg.NoDaytona = setting(cmd, "daytona", strconv.FormatBool(f.on), "SBX_DAYTONA") == "false"
}
