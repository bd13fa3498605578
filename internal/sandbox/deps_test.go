package sandbox

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDoesNotLinkTheAgent fails when the Manager links the in-sandbox agent
// (internal/agent): the daemon reaches the agent only through its contract,
// internal/agentapi, so the agent's handlers and their dependencies stay out
// of the daemon's core.
func TestDoesNotLinkTheAgent(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "github.com/sbxhq/sbx/internal/agent" || strings.HasPrefix(p, "github.com/sbxhq/sbx/internal/agent/") {
			t.Errorf("internal/sandbox depends on %s; use internal/agentapi", p)
		}
	}
}
