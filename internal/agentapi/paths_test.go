package agentapi_test

import (
	"testing"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/runtime"
)

// The runtime mounts the run directory and starts the agent with these
// paths; until it takes them from agentapi, they must agree.
func TestPathsMatchRuntime(t *testing.T) {
	if agentapi.RunPath != runtime.RunPath || agentapi.AgentSock != runtime.AgentSock {
		t.Fatalf("agentapi %s/%s, runtime %s/%s", agentapi.RunPath, agentapi.AgentSock, runtime.RunPath, runtime.AgentSock)
	}
}
