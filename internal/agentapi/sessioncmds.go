package agentapi

// Bounds of the recorded session commands of internal/agent/sessioncmds.go
// (bodies: sdk/sessioncmds.go).
const (
	MaxSessionCommandOutput = 8 << 20 // bytes kept per command
	MaxSessionCommands      = 1000    // commands kept per session; the oldest ended go first
)
