package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// Exec runs a command in a started sandbox, waits for it to finish and returns
// its exit status and (possibly truncated) output. A non-zero exit code is not
// an error.
func (c *Client) Exec(ctx context.Context, idOrName string, req ExecRequest) (*ExecResult, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	var res ExecResult
	err := c.call(ctx, request{method: http.MethodPost, path: sandboxPath(idOrName, "/exec"), in: req}, &res)
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// ErrStreamEnded is returned by ExecStream when the stream ends before the
// command's exit status arrives (the daemon or the connection went away). The
// command may still be running; its exit code is unknown.
var ErrStreamEnded = errors.New("exec stream ended before the command's exit status arrived")

// ExecStream runs a command and copies its output to stdout and stderr as it
// arrives (a nil writer discards). It returns the exit status; the Stdout and
// Stderr fields of the result are empty because the output went to the writers.
// An error event from the daemon is returned as an *APIError; a stream that
// ends without an exit event gives an error wrapping ErrStreamEnded.
func (c *Client) ExecStream(ctx context.Context, idOrName string, req ExecRequest, stdout, stderr io.Writer) (*ExecResult, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	resp, err := c.send(ctx, request{
		method: http.MethodPost,
		path:   sandboxPath(idOrName, "/exec"),
		query:  url.Values{"stream": {"true"}},
		in:     req,
	})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()

	// json.Decoder reads one object after another, which is exactly NDJSON,
	// without a line-length limit for large output chunks.
	dec := json.NewDecoder(resp.Body)
	for {
		var ev ExecEvent
		if err := dec.Decode(&ev); err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, ctxErr
			}
			if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, ErrStreamEnded
			}
			return nil, fmt.Errorf("decode exec stream: %w", err)
		}
		switch ev.Type {
		case "stdout":
			if _, err := stdout.Write(ev.Data); err != nil {
				return nil, fmt.Errorf("write command stdout: %w", err)
			}
		case "stderr":
			if _, err := stderr.Write(ev.Data); err != nil {
				return nil, fmt.Errorf("write command stderr: %w", err)
			}
		case "exit":
			return &ExecResult{
				ExitCode:   ev.ExitCode,
				Signal:     ev.Signal,
				TimedOut:   ev.TimedOut,
				DurationMs: ev.DurationMs,
			}, nil
		case "error":
			if ev.Error == nil {
				return nil, &APIError{Code: CodeInternal, Message: "exec failed without a message"}
			}
			return nil, &APIError{Code: ev.Error.Code, Message: ev.Error.Message}
		default:
			// "start", "heartbeat" and event types added later carry nothing
			// this client needs.
		}
	}
}
