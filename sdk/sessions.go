package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

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
