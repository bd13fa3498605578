package agentapi

// Where the agent listens. The host directory of an instance (its run
// directory, runtime.Instance.RunDir) is bind-mounted at RunPath inside it,
// so the socket the agent makes is reachable from the host.
const (
	RunPath   = "/.sbx/run"  // the agent's socket directory inside the instance
	AgentSock = "agent.sock" // socket file name inside RunPath / the run directory

	// AgentOutput is where the agent sends its own stdout and stderr, in
	// the run directory (a size-capped tmpfs).
	AgentOutput = "agent-output.log"

	// WakeFile is the file, in the agent's socket directory, whose
	// appearance makes a suspended agent listen again (see Wake).
	WakeFile = "wake"
)
