package wire

import (
	"encoding/json"
	"time"
)

// CreateSessionRequest starts a persistent shell (POST …/sessions).
type CreateSessionRequest struct {
	ID    string            `json:"id,omitempty"`    // default a generated "sess-…"
	Shell string            `json:"shell,omitempty"` // default /bin/bash if present, else /bin/sh
	Cwd   string            `json:"cwd,omitempty"`   // where the shell starts; default the workdir
	Env   map[string]string `json:"env,omitempty"`   // added to the shell's environment
	// TimeoutSeconds is the default limit of each command; 0: none.
	TimeoutSeconds float64 `json:"timeoutSeconds,omitempty"`
	User           string  `json:"user,omitempty"` // run the shell as this account (name or uid[:gid]). Default: "root".
}

// Session states.
const (
	SessionIdle  = "idle"  // ready for a command
	SessionBusy  = "busy"  // running a command
	SessionEnded = "ended" // the shell is gone (exit, or killed after a timeout); the next command starts a fresh one
)

// Session is a persistent shell: the working directory, exported variables,
// functions and aliases of one command are there for the next.
type Session struct {
	// The session's id, for …/sessions/{session}.
	ID     string `json:"id"`
	Handle string `json:"handle,omitempty"` // "id@instance": addresses it in this instance only; later ones answer 404 STALE_HANDLE
	// The shell's program.
	Shell string `json:"shell"`
	// The shell's process id inside the sandbox.
	Pid int `json:"pid"`
	// The variables it was started with (exports made in it are not listed).
	Env map[string]string `json:"env,omitempty"`
	// The default limit of each command; 0: none.
	TimeoutSeconds float64 `json:"timeoutSeconds,omitempty"`
	State          string  `json:"state"`              // "idle", "busy" or "ended"
	ExitCode       *int    `json:"exitCode,omitempty"` // the shell's, once ended
	// When the session started.
	CreatedAt time.Time `json:"createdAt"`
	// When a command last ran in it.
	LastUsedAt time.Time `json:"lastUsedAt"`
}

// SessionExecRequest runs one command in a session's shell. Commands in a
// session run one at a time; a second call waits for the first.
type SessionExecRequest struct {
	Command        string  `json:"command"`                  // shell text, as typed at a prompt
	TimeoutSeconds float64 `json:"timeoutSeconds,omitempty"` // default the session's
}

// SessionExecResult is the outcome of a command in a session. On a timeout
// the whole command line stops (its processes are killed, the rest of the
// list is skipped), ExitCode is 137 (128+SIGKILL) and the shell is kept;
// only when the shell itself does not come back (it ignores the interrupt)
// is it killed, and SessionEnded is set.
//
// A session whose shell has ended starts a fresh one for its next command,
// under the same id, with the session's original shell, working directory
// and environment (what earlier commands changed is gone, and what the old
// shell left running in the background is killed); that command's result
// has ShellRestarted set.
type SessionExecResult struct {
	// The command's exit status.
	ExitCode int `json:"exitCode"`
	// Standard output as text (at most 16 MiB; see truncated).
	Stdout string `json:"stdout"`
	// Standard error as text (at most 16 MiB; see truncated).
	Stderr string `json:"stderr"`
	// Output beyond the limit was dropped.
	Truncated bool `json:"truncated"`
	// How long the command ran, in milliseconds.
	DurationMs int64 `json:"durationMs"`
	// The command was killed because it ran past its timeout.
	TimedOut       bool `json:"timedOut"`
	SessionEnded   bool `json:"sessionEnded"`   // the shell is gone: exit was called, or it had to be killed
	ShellRestarted bool `json:"shellRestarted"` // the shell had ended before; this command ran in a fresh one
}

// SessionEvent is one line of a streamed session command: an ExecEvent whose
// "exit" also says whether the shell ended and whether it was restarted.
type SessionEvent struct {
	ExecEvent
	// The shell is gone ("exit"): exit was called, or it had to be killed.
	SessionEnded bool `json:"sessionEnded,omitempty"`
	// The shell had ended before; this command ran in a fresh one ("exit").
	ShellRestarted bool `json:"shellRestarted,omitempty"`
}

// MarshalJSON always writes the result fields of an "exit" (false and 0
// are answers there) and leaves them out of the other events.
func (e SessionEvent) MarshalJSON() ([]byte, error) {
	if e.Type != "exit" {
		return json.Marshal(e.ExecEvent)
	}
	return json.Marshal(struct {
		execExit
		SessionEnded   bool `json:"sessionEnded"`
		ShellRestarted bool `json:"shellRestarted"`
	}{newExecExit(e.ExecEvent), e.SessionEnded, e.ShellRestarted})
}
