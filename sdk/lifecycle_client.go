package sdk

import (
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

// UpdateSandbox changes a sandbox's lifecycle policy; nil fields keep their value.
func (c *Client) UpdateSandbox(ctx context.Context, idOrName string, req UpdateSandboxRequest) (*Sandbox, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	var sb Sandbox
	if err := c.call(ctx, request{method: http.MethodPatch, path: sandboxPath(idOrName, ""), in: req}, &sb); err != nil {
		return nil, err
	}
	return &sb, nil
}

// ArchiveSandbox packs a stopped sandbox's files into the daemon's blob
// store and frees them from local disk. The next start (explicit or lazy)
// restores them.
func (c *Client) ArchiveSandbox(ctx context.Context, idOrName string) (*Sandbox, error) {
	return c.sandboxCall(ctx, http.MethodPost, idOrName, "/archive", nil)
}

// WaitForState waits until the sandbox is in state and returns it. The
// daemon waits up to timeout per request (at most an hour; 0 means 60 s);
// if the state is not reached, the error is an *APIError with code
// WAIT_TIMEOUT (IsUnavailable). Waiting for StateDeleted succeeds once the
// sandbox is gone.
func (c *Client) WaitForState(ctx context.Context, idOrName string, state State, timeout time.Duration) (*Sandbox, error) {
	q := url.Values{"state": {string(state)}}
	if timeout > 0 {
		q.Set("timeoutSeconds", strconv.Itoa(int((timeout+time.Second-1)/time.Second)))
	}
	return c.sandboxCall(ctx, http.MethodPost, idOrName, "/wait", q)
}

// WaitForStart is WaitForState(StateStarted).
func (c *Client) WaitForStart(ctx context.Context, idOrName string, timeout time.Duration) (*Sandbox, error) {
	return c.WaitForState(ctx, idOrName, StateStarted, timeout)
}

// WaitForStop is WaitForState(StateStopped).
func (c *Client) WaitForStop(ctx context.Context, idOrName string, timeout time.Duration) (*Sandbox, error) {
	return c.WaitForState(ctx, idOrName, StateStopped, timeout)
}

// EventOptions select events. The zero value lists every kept event.
type EventOptions struct {
	After int64 // only events with a higher Seq
	Limit int   // at most this many (ListEvents only; default 1000)
}

// ListEvents returns a sandbox's recorded state changes, oldest first, or,
// with idOrName "", those of every sandbox, deletions included.
func (c *Client) ListEvents(ctx context.Context, idOrName string, opts EventOptions) ([]Event, error) {
	q := url.Values{}
	if opts.After > 0 {
		q.Set("after", strconv.FormatInt(opts.After, 10))
	}
	if opts.Limit > 0 {
		q.Set("limit", strconv.Itoa(opts.Limit))
	}
	var out []Event
	if err := c.call(ctx, request{method: http.MethodGet, path: eventsPath(idOrName), query: q}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// FollowEvents calls fn with each event as it is recorded, starting after
// opts.After, until ctx is done, fn returns an error (which it returns),
// or, for one sandbox, after its "deleted" event (then it returns nil).
func (c *Client) FollowEvents(ctx context.Context, idOrName string, opts EventOptions, fn func(Event) error) error {
	q := url.Values{"follow": {"true"}}
	if opts.After > 0 {
		q.Set("after", strconv.FormatInt(opts.After, 10))
	}
	resp, err := c.send(ctx, request{method: http.MethodGet, path: eventsPath(idOrName), query: q})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var line EventLine
		if err := dec.Decode(&line); err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return ctxErr
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("decode event stream: %w", err)
		}
		switch line.Type {
		case "event":
			if line.Event != nil {
				if err := fn(*line.Event); err != nil {
					return err
				}
			}
		case "error":
			if line.Error != nil {
				return &APIError{Code: line.Error.Code, Message: line.Error.Message}
			}
		}
	}
}

func eventsPath(idOrName string) string {
	if idOrName == "" {
		return "/v1/events"
	}
	return sandboxPath(idOrName, "/events")
}

// MainLogs copies the output of the sandbox's main process (its entrypoint;
// stdout and stderr together) to w. With follow it keeps copying until the
// sandbox stops or ctx is done; a follow keeps the sandbox active.
func (c *Client) MainLogs(ctx context.Context, idOrName string, follow bool, w io.Writer) error {
	return c.MainLogChunks(ctx, idOrName, MainLogsOptions{Follow: follow}, func(data []byte, _ *time.Time) error {
		_, err := w.Write(data)
		return err
	})
}

// MainLogsOptions selects the main process's output for MainLogChunks; the
// daemon applies them. The zero value sends all kept output and returns.
type MainLogsOptions struct {
	// Follow keeps the stream open until the sandbox stops or ctx is done.
	Follow bool
	// Tail, if set, sends only the last *Tail lines of the kept output (0: none, for
	// following only what comes next).
	Tail *int
	// Since, if set, sends only output written at or after it.
	Since time.Time
	// Timestamps passes each chunk's write time to the callback; a chunk is
	// then the output of one write by the process.
	Timestamps bool
}

func (o MainLogsOptions) query() url.Values {
	q := url.Values{}
	if o.Follow {
		q.Set("follow", "true")
	}
	if o.Tail != nil {
		q.Set("tail", strconv.Itoa(*o.Tail))
	}
	if !o.Since.IsZero() {
		q.Set("since", o.Since.UTC().Format(time.RFC3339Nano))
	}
	if o.Timestamps {
		q.Set("timestamps", "true")
	}
	return q
}

// MainLogChunks calls fn with each chunk of the main process's output, and
// with its write time when opts.Timestamps is set (else nil). An error from
// fn ends the stream and is returned.
func (c *Client) MainLogChunks(ctx context.Context, idOrName string, opts MainLogsOptions, fn func(data []byte, at *time.Time) error) error {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return err
	}
	resp, err := c.send(ctx, request{method: http.MethodGet, path: sandboxPath(idOrName, "/logs"), query: opts.query()})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var line LogLine
		if err := dec.Decode(&line); err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return ctxErr
			}
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return ErrStreamEnded
			}
			return fmt.Errorf("decode log stream: %w", err)
		}
		switch line.Type {
		case "data":
			if !opts.Timestamps {
				line.Time = nil
			}
			if err := fn(line.Data, line.Time); err != nil {
				return err
			}
		case "end":
			return nil
		case "error":
			if line.Error != nil {
				return &APIError{Code: line.Error.Code, Message: line.Error.Message}
			}
		}
	}
}

// Update is Client.UpdateSandbox on this sandbox.
func (h *SandboxHandle) Update(ctx context.Context, req UpdateSandboxRequest) (*Sandbox, error) {
	return h.c.UpdateSandbox(ctx, h.idOrName, req)
}

// Archive is Client.ArchiveSandbox on this sandbox.
func (h *SandboxHandle) Archive(ctx context.Context) (*Sandbox, error) {
	return h.c.ArchiveSandbox(ctx, h.idOrName)
}

// WaitForState is Client.WaitForState on this sandbox.
func (h *SandboxHandle) WaitForState(ctx context.Context, state State, timeout time.Duration) (*Sandbox, error) {
	return h.c.WaitForState(ctx, h.idOrName, state, timeout)
}

// Events is Client.ListEvents on this sandbox.
func (h *SandboxHandle) Events(ctx context.Context, opts EventOptions) ([]Event, error) {
	return h.c.ListEvents(ctx, h.idOrName, opts)
}

// MainLogs is Client.MainLogs on this sandbox.
func (h *SandboxHandle) MainLogs(ctx context.Context, follow bool, w io.Writer) error {
	return h.c.MainLogs(ctx, h.idOrName, follow, w)
}
