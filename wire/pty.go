package wire

import (
	"encoding/json"
	"time"
)

// CreatePTYRequest starts a program on a new terminal (POST …/ptys).
type CreatePTYRequest struct {
	ID  string   `json:"id,omitempty"`  // default a generated "pty-…"
	Cmd []string `json:"cmd,omitempty"` // default a login-less shell: /bin/bash if present, else /bin/sh
	// The working directory; a relative path starts at the workdir. By default the workdir.
	Cwd  string            `json:"cwd,omitempty"`
	Env  map[string]string `json:"env,omitempty"`  // TERM defaults to xterm-256color
	Cols int               `json:"cols,omitempty"` // Default: 80.
	Rows int               `json:"rows,omitempty"` // Default: 24.
	// Run as this account (name or uid[:gid]). Default: "root".
	User string `json:"user,omitempty"`
}

// PTY is a terminal in a sandbox and the program that runs on it (the
// session leader). It keeps running while no client is attached.
type PTY struct {
	// The terminal's id, for …/ptys/{pty}.
	ID     string `json:"id"`
	Handle string `json:"handle,omitempty"` // "id@instance": addresses it in this instance only; later ones answer 404 STALE_HANDLE
	// The process id of its program inside the sandbox.
	Pid int `json:"pid"`
	// The program and its arguments.
	Cmd []string `json:"cmd"`
	// The program's working directory.
	Cwd string `json:"cwd"`
	// The terminal's width in columns.
	Cols int `json:"cols"`
	// The terminal's height in rows.
	Rows  int    `json:"rows"`
	State string `json:"state"` // "running" or "exited"
	// The program's exit status, once exited; 128+N when signal N killed it.
	ExitCode *int `json:"exitCode,omitempty"`
	// The signal that killed the program, e.g. "SIGHUP".
	Signal   string `json:"signal,omitempty"`
	Attached int    `json:"attached"` // clients attached now
	// When the terminal was made.
	CreatedAt time.Time `json:"createdAt"`
	// When its program exited.
	EndedAt *time.Time `json:"endedAt,omitempty"`
}

// ResizeRequest sets a terminal's size (POST …/ptys/{pty}/resize).
type ResizeRequest struct {
	// The new width in columns.
	Cols int `json:"cols"`
	// The new height in rows.
	Rows int `json:"rows"`
}

// PTYControl is a text frame on a PTY WebSocket. Binary frames carry the
// terminal's bytes both ways; text frames carry these: "resize" from the
// client, "exit" from the server (then it closes the socket), and "error"
// from the server when the instance went away before the program exited
// (INSTANCE_LOST with the stop reason; then it closes the socket).
type PTYControl struct {
	// "resize" (client: cols, rows), "exit" (server: exitCode, signal; then a close) or "error"
	// (server: error; then a close).
	Type string `json:"type"`
	// The new width in columns ("resize").
	Cols int `json:"cols,omitempty"`
	// The new height in rows ("resize").
	Rows int `json:"rows,omitempty"`
	// The program's exit status ("exit").
	ExitCode int `json:"exitCode,omitempty"`
	// The signal that killed the program ("exit").
	Signal string `json:"signal,omitempty"`
	// Why the terminal went away, e.g. INSTANCE_LOST ("error").
	Error *ErrorBody `json:"error,omitempty"`
}

// MarshalJSON always writes exitCode in an "exit" frame (0 is an answer
// there) and leaves it out of the others.
func (c PTYControl) MarshalJSON() ([]byte, error) {
	type wire PTYControl // without this method
	if c.Type != "exit" {
		return json.Marshal(wire(c))
	}
	return json.Marshal(struct {
		wire
		ExitCode int `json:"exitCode"`
	}{wire(c), c.ExitCode})
}
