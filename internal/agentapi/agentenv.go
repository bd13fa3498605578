package agentapi

// AgentOnlyEnv, in the environment the runtime starts the agent with,
// names (comma-separated) the variables that are meant for the agent's own
// Go runtime alone, such as GOMAXPROCS=1 (internal/agent/tune.go): the Go
// runtime reads them as the process starts, and the agent then removes
// them, and AgentOnlyEnv itself, from the environment that the sandbox's
// processes inherit.
const AgentOnlyEnv = "SBX_AGENT_ONLY_ENV"
