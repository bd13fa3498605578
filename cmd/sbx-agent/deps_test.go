package main

import (
	"os/exec"
	"strings"
	"testing"
)

// agentPackages are the packages of this module sbx-agent may link: the
// agent and what the agent and the daemon share (the contract, errors,
// the public types). A new one belongs here only if every idle sandbox
// should pay for it.
var agentPackages = map[string]bool{
	"github.com/sbxhq/sbx/cmd/sbx-agent":              true,
	"github.com/sbxhq/sbx/internal/agent":             true,
	"github.com/sbxhq/sbx/internal/agent/lsp":         true,
	"github.com/sbxhq/sbx/internal/agentapi":          true,
	"github.com/sbxhq/sbx/internal/dirtar":            true,
	"github.com/sbxhq/sbx/internal/errdefs":           true,
	"github.com/sbxhq/sbx/internal/httpjson":          true,
	"github.com/sbxhq/sbx/internal/runtime/runscshim": true,
	"github.com/sbxhq/sbx/internal/treetar":           true,
	"github.com/sbxhq/sbx/wire":                       true,
}

// daemonOnly are third-party modules that only the daemon or the CLI need.
var daemonOnly = []string{
	"github.com/spf13/cobra",
	"modernc.org/sqlite",
	"github.com/prometheus/",
	"k8s.io/",
	"sigs.k8s.io/",
	"github.com/aws/",
}

// TestLinksOnlyTheAgent fails when sbx-agent links a daemon-only package:
// every sandbox runs it, and Go initialises every linked package at start.
func TestLinksOnlyTheAgent(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list -deps listed only %d packages: %q", len(deps), deps)
	}
	for _, p := range deps {
		if strings.HasPrefix(p, "github.com/sbxhq/sbx/") && !agentPackages[p] {
			t.Errorf("sbx-agent links %s, which is not an agent package (agentPackages)", p)
		}
		for _, d := range daemonOnly {
			if strings.HasPrefix(p, d) {
				t.Errorf("sbx-agent links %s (daemon-only)", p)
			}
		}
	}
}
