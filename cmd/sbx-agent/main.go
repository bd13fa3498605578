// Command sbx-agent is the agent that runs as PID 1 inside every sandbox
// instance (see package agent). It is the agent alone: a sandbox that sits
// idle pays for what this binary links and initialises, so it imports the
// agent and nothing of the daemon or the CLI (TestLinksOnlyTheAgent).
//
//	sbx-agent [agent] --socket PATH     serve the toolbox on PATH
//	sbx-agent runsc-shim RUNSC ARG...  run runsc for the daemon (runscshim)
//
// The daemon looks for it next to its own executable; `sbx agent` does the
// same job where it is missing. The leading "agent" is accepted so that both
// take the command line the OCI spec gives (runtime.Spec).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/sbxhq/sbx/internal/agent"
	"github.com/sbxhq/sbx/internal/runtime/runscshim"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == runscshim.Command {
		err := runscshim.Run(args[1:])
		fmt.Fprintf(os.Stderr, "sbx-agent: %v\n", err)
		os.Exit(1)
	}
	if len(args) > 0 && args[0] == "agent" {
		args = args[1:]
	}
	fs := flag.NewFlagSet("sbx-agent", flag.ContinueOnError)
	socket := fs.String("socket", "", "unix socket to serve the toolbox on (required)")
	if err := fs.Parse(args); err != nil {
		os.Exit(2)
	}
	if *socket == "" || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: sbx-agent [agent] --socket PATH")
		os.Exit(2)
	}
	// The agent handles SIGTERM itself (it gives processes a grace period).
	if err := agent.Run(context.Background(), agent.Config{Socket: *socket, DefaultCwd: os.Getenv("SBX_WORKDIR")}); err != nil {
		fmt.Fprintf(os.Stderr, "sbx-agent: %v\n", err)
		os.Exit(1)
	}
}
