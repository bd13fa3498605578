package agent

import (
	"os"
	"testing"

	"github.com/sbxhq/sbx/internal/agentapi"
)

// The variables the runtime sets for the agent's Go runtime alone do not
// reach the sandbox's processes; the sandbox's own variables do.
func TestDropAgentOnlyEnv(t *testing.T) {
	t.Setenv("GOMAXPROCS", "1")
	t.Setenv("SBX_TEST_KEEP", "yes")
	t.Setenv(agentapi.AgentOnlyEnv, "GOMAXPROCS")
	dropAgentOnlyEnv()
	for _, k := range []string{"GOMAXPROCS", agentapi.AgentOnlyEnv} {
		if v, ok := os.LookupEnv(k); ok {
			t.Errorf("%s=%q is still in the environment", k, v)
		}
	}
	if os.Getenv("SBX_TEST_KEEP") != "yes" {
		t.Error("a sandbox's own variable was dropped")
	}
}
