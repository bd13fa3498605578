package agentapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/wire"
)

// Limits on what the daemon takes from an agent. Code in the sandbox can
// replace the agent and answer anything: headers and bodies read whole are
// bounded, and every call has a deadline.
const (
	MaxHeaderBytes = 64 << 10         // response headers
	MaxAnswer      = 1 << 20          // a JSON answer the client reads whole
	CallTimeout    = 30 * time.Second // a call whose context has no deadline
)

// idleConnTimeout is how long a connection to an agent is kept for the next
// call once idle. Short: a kept connection costs the daemon two goroutines
// and 8 KiB of buffers (and the agent as much again), which a host of
// thousands of idle sandboxes pays for every one it touched lately, while a
// new connection to the unix socket costs well under a millisecond
// (docs/performance.md). A client making calls in a row keeps its own.
var idleConnTimeout = 5 * time.Second

// Client is the daemon's view of one agent, reached through the agent socket
// in the instance's run directory on the host.
type Client struct {
	sock      string
	transport *http.Transport
	http      *http.Client
}

// NewClient returns a client for the agent whose socket is runDir/AgentSock.
// It connects lazily; the agent need not be running yet.
func NewClient(runDir string) *Client {
	c := &Client{sock: filepath.Join(runDir, AgentSock)}
	c.transport = &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialSocket(ctx, c.sock)
		},
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    64,
		IdleConnTimeout:        idleConnTimeout,
		DisableCompression:     true, // proxy bytes as they are
		MaxResponseHeaderBytes: MaxHeaderBytes,
	}
	c.http = &http.Client{Transport: observed{c.transport}} // observe.go
	return c
}

// Socket is the path of the agent's socket on the host.
func (c *Client) Socket() string { return c.sock }

// Transport is the round tripper that reaches the agent (for tests and
// tools; the daemon goes through Forward and Proxy, which add the limits).
func (c *Client) Transport() http.RoundTripper { return c.transport }

// Close drops idle connections to the agent.
func (c *Client) Close() { c.transport.CloseIdleConnections() }

// agentHost is the host part of every request; the socket decides where it
// goes.
const agentHost = "agent"

func agentURL(path, rawQuery string) string {
	u := "http://" + agentHost + path
	if rawQuery != "" {
		u += "?" + rawQuery
	}
	return u
}

// Dial connects to the agent socket at path the way the client does (see
// dialSocket).
func Dial(ctx context.Context, path string) (net.Conn, error) { return dialSocket(ctx, path) }

// dialSocket connects to the unix socket at path without following a
// symlink. The run directory is writable from inside the sandbox, so code
// there can replace the socket with a symlink to a host socket (say
// /var/run/docker.sock); connect(2) on the path would follow it on the host.
// Instead the final component is opened with O_PATH|O_NOFOLLOW, checked to be
// a socket, and connected to through /proc/self/fd, which names that very
// inode.
func dialSocket(ctx context.Context, path string) (net.Conn, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil, errdefs.Unavailable(wire.CodeAgentUnavailable, "agent socket %s does not exist (agent not running?)", path)
	}
	if err != nil {
		return nil, &errdefs.Error{Kind: errdefs.KindUnavailable, Code: wire.CodeAgentUnavailable,
			Message: fmt.Sprintf("open agent socket %s", path), Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, errdefs.Internal(err, "stat agent socket %s", path)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFSOCK:
	case unix.S_IFLNK:
		return nil, errdefs.Unavailable(wire.CodeAgentSocketInvalid, "refusing to connect: agent socket %s is a symlink (replaced from inside the sandbox?)", path)
	default:
		return nil, errdefs.Unavailable(wire.CodeAgentSocketInvalid, "refusing to connect: %s is not a socket", path)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", "/proc/self/fd/"+strconv.Itoa(fd))
	if err != nil {
		return nil, &errdefs.Error{Kind: errdefs.KindUnavailable, Code: wire.CodeAgentUnavailable,
			Message: fmt.Sprintf("connect to agent socket %s", path), Err: err}
	}
	return conn, nil
}

// Health reports whether the agent answers.
func (c *Client) Health(ctx context.Context) error {
	_, err := c.call(ctx, Health, "", http.StatusOK)
	return err
}

// WaitReady polls Health until it succeeds or ctx is done. The poll is tight
// because instance start time is on the critical path.
func (c *Client) WaitReady(ctx context.Context) error {
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	polls := withoutObserving(ctx) // observe.go
	for {
		err := c.Health(polls)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return &errdefs.Error{Kind: errdefs.KindUnavailable, Code: wire.CodeAgentUnavailable,
				Message: "agent did not become ready", Err: err}
		case <-t.C:
		}
	}
}

// Shutdown asks the agent to stop every process (SIGTERM, then SIGKILL after
// grace) and exit. It returns once the agent has accepted; the agent exits
// when done.
func (c *Client) Shutdown(ctx context.Context, grace time.Duration) error {
	q := "graceSeconds=" + strconv.FormatFloat(grace.Seconds(), 'f', -1, 64)
	_, err := c.call(ctx, Shutdown, q, http.StatusAccepted)
	return err
}

// Sync asks the agent to flush written file data.
func (c *Client) Sync(ctx context.Context) error {
	_, err := c.call(ctx, Sync, "", http.StatusOK)
	return err
}

// Suspend asks the agent to close its socket for a checkpoint and waits
// until it has: the socket file is gone. A refusal (409 CHECKPOINT_REFUSED)
// names the process's socket that stands in the way.
func (c *Client) Suspend(ctx context.Context) error {
	os.Remove(filepath.Join(filepath.Dir(c.sock), WakeFile))
	if _, err := c.call(ctx, Suspend, "", http.StatusOK); err != nil {
		return err
	}
	c.Close()
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for {
		if _, err := os.Lstat(c.sock); errors.Is(err, os.ErrNotExist) {
			return nil
		}
		select {
		case <-ctx.Done():
			return errdefs.Unavailable(wire.CodeAgentNotSuspended, "the agent did not close its socket: %v", ctx.Err())
		case <-t.C:
		}
	}
}

// SetEnv changes the environment of the processes the agent starts from
// now on: a value sets a variable, nil unsets it.
func (c *Client) SetEnv(ctx context.Context, change map[string]*string) error {
	body, err := json.Marshal(change)
	if err != nil {
		return errdefs.Internal(err, "encode environment")
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, CallTimeout)
		defer cancel()
	}
	resp, err := c.Forward(ctx, Request{Method: SetEnv.Method, Path: SetEnv.Path, ContentType: "application/json",
		Body: bytes.NewReader(body), ContentLength: int64(len(body))})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, MaxAnswer))
		return responseError(resp.StatusCode, b)
	}
	return nil
}

// call sends a body-less request on route and reads the JSON answer whole
// (bounded by MaxAnswer). Without a deadline in ctx it gets CallTimeout.
func (c *Client) call(ctx context.Context, route Route, rawQuery string, want int) ([]byte, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, CallTimeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, route.Method, agentURL(route.Path, rawQuery), nil)
	if err != nil {
		return nil, errdefs.Internal(err, "build agent request")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, transportError(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswer+1))
	if err != nil {
		return nil, &errdefs.Error{Kind: errdefs.KindUnavailable, Code: wire.CodeAgentUnavailable, Message: "read agent response", Err: err}
	}
	if len(body) > MaxAnswer {
		return nil, errdefs.Unavailable(wire.CodeAgentResponseTooLarge, "the agent's answer to %s is larger than %d bytes", route.Pattern(), MaxAnswer)
	}
	if resp.StatusCode != want {
		return nil, responseError(resp.StatusCode, body)
	}
	return body, nil
}

// Request is a call the daemon forwards from its API to the agent.
type Request struct {
	Method, Path, RawQuery string // Path as the agent serves it: "/exec"
	ContentType            string
	Body                   io.Reader // nil for none
	ContentLength          int64     // -1 when unknown
}

// Forward sends req and returns the agent's answer for the caller to relay;
// the caller closes its body. It has no deadline of its own (a stream lasts
// as long as ctx); its headers are bounded by MaxHeaderBytes, and a reader
// of a stream bounds its lines (Reader).
func (c *Client) Forward(ctx context.Context, in Request) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, in.Method, agentURL(in.Path, in.RawQuery), in.Body)
	if err != nil {
		return nil, errdefs.Internal(err, "build agent request")
	}
	req.ContentLength = in.ContentLength
	if in.Body == nil {
		req.ContentLength = 0 // or a GET would go out chunked
	}
	if in.ContentType != "" {
		req.Header.Set("Content-Type", in.ContentType)
	}
	resp, err := observed{c.transport}.RoundTrip(req)
	if err != nil {
		return nil, transportError(err)
	}
	return resp, nil
}

// Proxy returns a handler that forwards its request to path on the agent,
// streaming bodies both ways (WebSocket upgrades too), without the client's
// Authorization header. onError answers when the agent cannot be reached.
func (c *Client) Proxy(path string, onError func(http.ResponseWriter, *http.Request, error)) http.Handler {
	return &httputil.ReverseProxy{
		Transport:     observed{c.transport},
		FlushInterval: -1,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = "http"
			pr.Out.URL.Host = agentHost
			pr.Out.Host = agentHost
			pr.Out.URL.Path = path
			pr.Out.URL.RawPath = ""
			pr.Out.Header.Del("Authorization")
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) { onError(w, r, transportError(err)) },
	}
}

// transportError names the failure of a round trip to the agent. An errdefs
// error (from dialSocket) stays as it is.
func transportError(err error) error {
	var e *errdefs.Error
	if errors.As(err, &e) {
		return err
	}
	if strings.Contains(err.Error(), "server response headers exceeded") {
		return &errdefs.Error{Kind: errdefs.KindUnavailable, Code: wire.CodeAgentResponseTooLarge,
			Message: fmt.Sprintf("the agent answered with headers over %d bytes", MaxHeaderBytes), Err: err}
	}
	return &errdefs.Error{Kind: errdefs.KindUnavailable, Code: wire.CodeAgentUnavailable, Message: "the agent did not answer", Err: err}
}

// responseError rebuilds the errdefs error behind an agent error response.
func responseError(status int, body []byte) error {
	var er wire.ErrorResponse
	if json.Unmarshal(body, &er) != nil || er.Error.Code == "" {
		er.Error = wire.ErrorBody{Code: wire.CodeAgentError, Message: fmt.Sprintf("agent answered %d: %.200s", status, body)}
	}
	return &errdefs.Error{Kind: httpjson.KindOf(status), Code: er.Error.Code, Message: er.Error.Message}
}
