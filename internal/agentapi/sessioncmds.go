package agentapi

// Bodies of the recorded session commands of internal/agent/sessioncmds.go:
// commands run in a session's shell that the agent keeps a record of (id,
// text, output, exit code), run in the foreground or in the background with
// their own stdin, so a caller keeps no state of its own about them.

// SessionRunRequest is the body of SessionRun.
type SessionRunRequest struct {
	Command string `json:"command"`
	// Async answers at once with the command's id; the command runs on,
	// reading the input sent with SessionCommandInput. Otherwise the answer
	// comes when it ends, and its stdin is empty.
	Async          bool    `json:"async,omitempty"`
	TimeoutSeconds float64 `json:"timeoutSeconds,omitempty"` // 0: the session's
	// Echo adds the input sent to an async command to its stdout, as a
	// terminal would show it.
	Echo bool `json:"echo,omitempty"`
}

// SessionCommand is one recorded command; ExitCode is nil while it runs.
// Logs are there in SessionRun's answer of a command that was not async.
type SessionCommand struct {
	ID       string       `json:"id"`
	Command  string       `json:"command"`
	ExitCode *int         `json:"exitCode,omitempty"`
	Logs     *SessionLogs `json:"logs,omitempty"`
}

// SessionLogs is a command's output: both streams in order, and each.
type SessionLogs struct {
	Output    string `json:"output"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	Truncated bool   `json:"truncated"` // output past MaxSessionCommandOutput was dropped
}

// SessionLogEvent is one line of SessionCommandLogs with ?follow=true:
// "stdout"/"stderr" with Data, then one "exit" with ExitCode.
type SessionLogEvent struct {
	Type     string `json:"type"`
	Data     []byte `json:"data,omitempty"`
	ExitCode int    `json:"exitCode"`
}

// SessionInput is the body of SessionCommandInput.
type SessionInput struct {
	Data string `json:"data"`
}

// Bounds of the record.
const (
	MaxSessionCommandOutput = 8 << 20 // bytes kept per command
	MaxSessionCommands      = 1000    // commands kept per session; the oldest ended go first
)
