package wire

// SessionRunRequest is the body of POST …/sessions/{session}/commands.
type SessionRunRequest struct {
	// The command line, run by the session's shell.
	Command string `json:"command"`
	// Answer at once with the command's id; the command runs on, reading
	// the input sent to …/commands/{command}/input. Otherwise the answer
	// comes when it ends, and its stdin is empty.
	Async bool `json:"async,omitempty"`
	// Give up after this many seconds; 0: the session's timeout.
	TimeoutSeconds float64 `json:"timeoutSeconds,omitempty"`
	// Add the input sent to an async command to its stdout, as a terminal
	// would show it.
	Echo bool `json:"echo,omitempty"`
}

// SessionCommand is one recorded command.
type SessionCommand struct {
	// The command's id in its session.
	ID string `json:"id"`
	// The command line.
	Command string `json:"command"`
	// Its exit code once it ended; absent while it runs.
	ExitCode *int `json:"exitCode,omitempty"`
	// Its output, in the answer of a command that was not async.
	Logs *SessionLogs `json:"logs,omitempty"`
}

// SessionLogs is a command's output: both streams in order, and each.
type SessionLogs struct {
	// stdout and stderr as they came, interleaved.
	Output string `json:"output"`
	// The command's stdout.
	Stdout string `json:"stdout"`
	// The command's stderr.
	Stderr string `json:"stderr"`
	// Output past the 8 MiB kept per command was dropped.
	Truncated bool `json:"truncated"`
}

// SessionLogEvent is one NDJSON line of …/commands/{command}/logs with
// follow=true: "stdout"/"stderr" with Data, then one "exit" with ExitCode.
type SessionLogEvent struct {
	// stdout, stderr or exit.
	Type string `json:"type"`
	// A chunk of output (base64 in JSON), for stdout and stderr.
	Data []byte `json:"data,omitempty"`
	// The command's exit code, for exit.
	ExitCode int `json:"exitCode"`
}

// SessionInput is the body of POST …/commands/{command}/input.
type SessionInput struct {
	// Text written to the command's stdin as it is.
	Data string `json:"data"`
}
