// Package agentapi is the contract between the daemon and the agent that
// runs as PID 1 in every instance: where the agent listens (paths.go), the
// routes it serves (routes.go), how streams are framed (framing.go), and the
// typed client the daemon reaches it with (client.go).
//
// Both sides import this package, so a route or an event type cannot drift
// between them. Request and response bodies are the sdk wire types (the
// daemon forwards most toolbox calls as they are); this package only adds
// what is private to the daemon–agent hop.
//
// The agent is hostile (docs/architecture.md, invariant 9): code in the sandbox can replace
// it or its socket. Every Client call therefore has a deadline, and every
// answer read into memory has a size limit.
package agentapi
