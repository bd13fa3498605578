package agent

import (
	"os"
	"strings"

	"github.com/sbxhq/sbx/internal/agentapi"
)

// An idle sandbox costs what its agent holds: every sandbox on a host runs
// one, and most of them sit idle most of the time. The agent runs Go code
// on one thread at a time: the runtime starts it with GOMAXPROCS=1 (and
// names it in agentapi.AgentOnlyEnv, see runtime.Spec). Each P keeps caches
// and work buffers of its own, and the threads that ran it stay for good;
// GOMAXPROCS has to be in the environment at exec, since package
// initialisation already runs on every P. The agent's own work (exec's
// plumbing, file transfers) is I/O-bound; the sandbox's processes are not
// limited by it.
//
// Measured (an agent in a memory cgroup of its own, 3 execs, then idle;
// memory.usage_in_bytes): 2.2 MiB with the defaults on 2 CPUs, 2.15 MiB
// with runtime.GOMAXPROCS(1) called first thing in Run, 1.8 MiB with
// GOMAXPROCS=1 from the environment. GOGC 25 to 200 and GOMEMLIMIT=1MiB
// did not lower it (more collections touch more of the runtime's own
// memory), nor did returning free memory to the kernel when idle
// (debug.FreeOSMemory).

// dropAgentOnlyEnv removes the variables meant for the agent alone from the
// environment the sandbox's processes inherit; Run calls it first.
func dropAgentOnlyEnv() {
	names := os.Getenv(agentapi.AgentOnlyEnv)
	os.Unsetenv(agentapi.AgentOnlyEnv)
	for _, name := range strings.Split(names, ",") {
		if name != "" {
			os.Unsetenv(name)
		}
	}
}
