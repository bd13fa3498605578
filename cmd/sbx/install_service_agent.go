package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/internal/sandbox"
)

// warnNoAgent says when the service's sbx has no sbx-agent next to it (and
// no --agent-binary): the service then runs, but every sandbox runs the
// whole sbx as its agent and costs more memory.
func warnNoAgent(cmd *cobra.Command, o serviceOptions) {
	if slices.Contains(o.serveArg, "--agent-binary") || os.Getenv("SBX_AGENT_BINARY") != "" {
		return
	}
	agent := filepath.Join(filepath.Dir(o.binary), sandbox.AgentBinaryName)
	if fi, err := os.Stat(agent); err == nil && fi.Mode().IsRegular() {
		return
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "sbx: warning: no %s next to %s: sandboxes will run the whole sbx as their agent (more memory each); install it there (scripts/setup.sh does) or pass -- --agent-binary PATH\n", sandbox.AgentBinaryName, o.binary)
}
