package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// LogsOptions selects output for ProcessLogs. The zero value returns all
// retained output and returns at once.
type LogsOptions struct {
	// Offset skips chunks with a sequence number up to and including it:
	// pass the last Seq you have seen to resume.
	Offset int64
	// Follow keeps the stream open until the process exits.
	Follow bool
}

// IsProcessExited reports whether err says the process exited before the
// awaited log line or port showed up (or the signalled process is gone).
func IsProcessExited(err error) bool { return hasCode(err, CodeProcessExited) }

// IsWaitTimeout reports whether err says a wait ran out of time.
func IsWaitTimeout(err error) bool { return hasCode(err, CodeWaitTimeout) }

func hasCode(err error, code Code) bool {
	var e *APIError
	return errors.As(err, &e) && e.Code == code
}

func processPath(idOrName, processID, suffix string) string {
	return sandboxPath(idOrName, "/processes/"+url.PathEscape(processID)+suffix)
}

func checkProcess(idOrName, processID string) error {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return err
	}
	return checkName("process id", processID)
}

// StartProcess starts a background process and returns at once. The process
// outlives the request: follow it with ProcessLogs, WaitProcess, WaitForLog
// or WaitForPort.
func (c *Client) StartProcess(ctx context.Context, idOrName string, req StartProcessRequest) (*Process, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	var p Process
	if err := c.call(ctx, request{method: http.MethodPost, path: sandboxPath(idOrName, "/processes"), in: req}, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// ListProcesses lists the sandbox's background processes, running and exited.
func (c *Client) ListProcesses(ctx context.Context, idOrName string) ([]Process, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	var list []Process
	if err := c.call(ctx, request{method: http.MethodGet, path: sandboxPath(idOrName, "/processes")}, &list); err != nil {
		return nil, err
	}
	return list, nil
}

// GetProcess returns one background process.
func (c *Client) GetProcess(ctx context.Context, idOrName, processID string) (*Process, error) {
	return c.processCall(ctx, http.MethodGet, idOrName, processID, "", nil, nil)
}

// DeleteProcess kills the process's group if it still runs and forgets it.
func (c *Client) DeleteProcess(ctx context.Context, idOrName, processID string) error {
	if err := checkProcess(idOrName, processID); err != nil {
		return err
	}
	return c.call(ctx, request{method: http.MethodDelete, path: processPath(idOrName, processID, "")}, nil)
}

// SignalProcess sends a signal ("TERM", "SIGKILL", "9", …; "" is SIGTERM) to
// the process's whole group, so its children get it too.
func (c *Client) SignalProcess(ctx context.Context, idOrName, processID, signal string) (*Process, error) {
	return c.processCall(ctx, http.MethodPost, idOrName, processID, "/signal", nil, SignalRequest{Signal: signal})
}

// WaitProcess blocks until the process exits and returns it. A timeout of 0
// waits as long as ctx allows; otherwise running out of time gives an error
// for which IsWaitTimeout is true.
func (c *Client) WaitProcess(ctx context.Context, idOrName, processID string, timeout time.Duration) (*Process, error) {
	q := url.Values{}
	if timeout > 0 {
		q.Set("timeoutSeconds", strconv.FormatFloat(timeout.Seconds(), 'f', -1, 64))
	}
	return c.processCall(ctx, http.MethodPost, idOrName, processID, "/wait", q, nil)
}

func (c *Client) processCall(ctx context.Context, method, idOrName, processID, suffix string, q url.Values, in any) (*Process, error) {
	if err := checkProcess(idOrName, processID); err != nil {
		return nil, err
	}
	var p Process
	if err := c.call(ctx, request{method: method, path: processPath(idOrName, processID, suffix), query: q, in: in}, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// WaitForLog blocks until a line of the process's output matches req. If the
// process exits first the error satisfies IsProcessExited; running out of
// time gives IsWaitTimeout.
func (c *Client) WaitForLog(ctx context.Context, idOrName, processID string, req WaitForLogRequest) (*LogMatch, error) {
	if err := checkProcess(idOrName, processID); err != nil {
		return nil, err
	}
	var m LogMatch
	if err := c.call(ctx, request{method: http.MethodPost, path: processPath(idOrName, processID, "/wait-for-log"), in: req}, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// WaitForPort blocks until the port accepts connections (or answers HTTP
// with the expected status). If the process exits first the error satisfies
// IsProcessExited; running out of time gives IsWaitTimeout.
func (c *Client) WaitForPort(ctx context.Context, idOrName, processID string, req WaitForPortRequest) (*PortReady, error) {
	if err := checkProcess(idOrName, processID); err != nil {
		return nil, err
	}
	var r PortReady
	if err := c.call(ctx, request{method: http.MethodPost, path: processPath(idOrName, processID, "/wait-for-port"), in: req}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// WriteStdin writes data to the process's stdin.
func (c *Client) WriteStdin(ctx context.Context, idOrName, processID string, data []byte) error {
	if err := checkProcess(idOrName, processID); err != nil {
		return err
	}
	return c.call(ctx, request{method: http.MethodPost, path: processPath(idOrName, processID, "/stdin"),
		body: bytes.NewReader(data), contentType: "application/octet-stream"}, nil)
}

// CloseStdin closes the process's stdin, so it reads end of file.
func (c *Client) CloseStdin(ctx context.Context, idOrName, processID string) error {
	if err := checkProcess(idOrName, processID); err != nil {
		return err
	}
	return c.call(ctx, request{method: http.MethodPost, path: processPath(idOrName, processID, "/stdin/close")}, nil)
}

// ProcessLogs copies the process's output to stdout and stderr (a nil
// writer discards): the retained chunks after opts.Offset, and with
// opts.Follow everything it writes until it exits. A stream that breaks
// gives an *APIError (from the daemon's error event) or ErrStreamEnded.
func (c *Client) ProcessLogs(ctx context.Context, idOrName, processID string, opts LogsOptions, stdout, stderr io.Writer) (*LogsResult, error) {
	if err := checkProcess(idOrName, processID); err != nil {
		return nil, err
	}
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	q := url.Values{}
	if opts.Offset > 0 {
		q.Set("offset", strconv.FormatInt(opts.Offset, 10))
	}
	if opts.Follow {
		q.Set("follow", "true")
	}
	resp, err := c.send(ctx, request{method: http.MethodGet, path: processPath(idOrName, processID, "/logs"), query: q})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	res := &LogsResult{LastSeq: opts.Offset}
	dec := json.NewDecoder(resp.Body)
	for {
		var ev ExecEvent
		if err := dec.Decode(&ev); err != nil {
			return nil, streamError(ctx, err)
		}
		switch ev.Type {
		case "stdout", "stderr":
			if ev.Seq > res.LastSeq+1 {
				res.Gap = true
			}
			res.LastSeq = ev.Seq
			w := stdout
			if ev.Type == "stderr" {
				w = stderr
			}
			if _, err := w.Write(ev.Data); err != nil {
				return nil, fmt.Errorf("write process %s: %w", ev.Type, err)
			}
		case "end": // everything retained so far was sent; the process runs on
			if ev.Seq > res.LastSeq {
				res.Gap = true // only dropped chunks lay between
				res.LastSeq = ev.Seq
			}
			return res, nil
		case "exit":
			if ev.Seq > res.LastSeq {
				res.Gap = true
				res.LastSeq = ev.Seq
			}
			res.Exited, res.ExitCode, res.Signal = true, ev.ExitCode, ev.Signal
			return res, nil
		case "error":
			return nil, eventError(ev.Error)
		}
	}
}

// streamError turns the end of an NDJSON stream without a final event into
// an error.
func streamError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return ErrStreamEnded
	}
	return fmt.Errorf("decode stream: %w", err)
}

// eventError turns an error event into an *APIError.
func eventError(e *ErrorBody) error {
	if e == nil {
		return &APIError{Code: CodeInternal, Message: "the stream failed without a message"}
	}
	return &APIError{Code: e.Code, Message: e.Message}
}
