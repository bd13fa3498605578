package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
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

func sessionPath(idOrName, sessionID, suffix string) string {
	return sandboxPath(idOrName, "/sessions/"+url.PathEscape(sessionID)+suffix)
}

func checkSession(idOrName, sessionID string) error {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return err
	}
	return checkName("session id", sessionID)
}

// CreateSession starts a persistent shell in the sandbox.
func (c *Client) CreateSession(ctx context.Context, idOrName string, req CreateSessionRequest) (*Session, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	var s Session
	if err := c.call(ctx, request{method: http.MethodPost, path: sandboxPath(idOrName, "/sessions"), in: req}, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// ListSessions lists the sandbox's sessions.
func (c *Client) ListSessions(ctx context.Context, idOrName string) ([]Session, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	var list []Session
	if err := c.call(ctx, request{method: http.MethodGet, path: sandboxPath(idOrName, "/sessions")}, &list); err != nil {
		return nil, err
	}
	return list, nil
}

// GetSession returns one session.
func (c *Client) GetSession(ctx context.Context, idOrName, sessionID string) (*Session, error) {
	if err := checkSession(idOrName, sessionID); err != nil {
		return nil, err
	}
	var s Session
	if err := c.call(ctx, request{method: http.MethodGet, path: sessionPath(idOrName, sessionID, "")}, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// DeleteSession kills the session's shell and everything it started.
func (c *Client) DeleteSession(ctx context.Context, idOrName, sessionID string) error {
	if err := checkSession(idOrName, sessionID); err != nil {
		return err
	}
	return c.call(ctx, request{method: http.MethodDelete, path: sessionPath(idOrName, sessionID, "")}, nil)
}

// SessionExec runs a command in the session and returns its result. A
// non-zero exit code is not an error.
func (c *Client) SessionExec(ctx context.Context, idOrName, sessionID string, req SessionExecRequest) (*SessionExecResult, error) {
	if err := checkSession(idOrName, sessionID); err != nil {
		return nil, err
	}
	var res SessionExecResult
	if err := c.call(ctx, request{method: http.MethodPost, path: sessionPath(idOrName, sessionID, "/exec"), in: req}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// SessionExecStream runs a command in the session and copies its output to
// stdout and stderr as it arrives (a nil writer discards). The result's
// Stdout and Stderr are empty.
func (c *Client) SessionExecStream(ctx context.Context, idOrName, sessionID string, req SessionExecRequest, stdout, stderr io.Writer) (*SessionExecResult, error) {
	if err := checkSession(idOrName, sessionID); err != nil {
		return nil, err
	}
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	resp, err := c.send(ctx, request{method: http.MethodPost, path: sessionPath(idOrName, sessionID, "/exec"),
		query: url.Values{"stream": {"true"}}, in: req})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var ev SessionEvent
		if err := dec.Decode(&ev); err != nil {
			return nil, streamError(ctx, err)
		}
		switch ev.Type {
		case "stdout", "stderr":
			w := stdout
			if ev.Type == "stderr" {
				w = stderr
			}
			if _, err := w.Write(ev.Data); err != nil {
				return nil, fmt.Errorf("write command %s: %w", ev.Type, err)
			}
		case "exit":
			return &SessionExecResult{ExitCode: ev.ExitCode, TimedOut: ev.TimedOut, DurationMs: ev.DurationMs,
				SessionEnded: ev.SessionEnded, ShellRestarted: ev.ShellRestarted}, nil
		case "error":
			return nil, eventError(ev.Error)
		}
	}
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
