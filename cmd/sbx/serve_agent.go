package main

import (
	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/internal/daemon"
)

// agentFlags pick the binary every sandbox runs as its agent.
type agentFlags struct {
	binary string
}

func (f *agentFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.binary, "agent-binary", "",
		"static agent binary every sandbox runs as PID 1 (env SBX_AGENT_BINARY; default: sbx-agent next to this sbx, else this sbx with a warning)")
}

func (f *agentFlags) apply(cmd *cobra.Command, cfg *daemon.Config) {
	cfg.AgentBinary = setting(cmd, "agent-binary", f.binary, "SBX_AGENT_BINARY")
}
