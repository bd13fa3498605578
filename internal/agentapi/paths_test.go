package agentapi_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestAgentNeedsNoRuntime keeps the agent's side of the contract here: the
// agent (in the instance) must not depend on the daemon's runtime package
// for paths or anything else.
func TestAgentNeedsNoRuntime(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/sbxhq/sbx/internal/agent").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "github.com/sbxhq/sbx/internal/runtime" {
			t.Fatal("internal/agent depends on internal/runtime: take what it needs from internal/agentapi")
		}
	}
}
