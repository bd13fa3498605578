package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/sdk"
)

// Client is the daemon's view of one agent, reached through the agent socket
// in the instance's run directory on the host. Requests go to "http://agent/…";
// the host part is ignored.
type Client struct {
	sock      string
	transport *http.Transport
	http      *http.Client
}

// NewClient returns a client for the agent whose socket is runDir/AgentSock.
// It connects lazily; the agent need not be running yet.
func NewClient(runDir string) *Client {
	c := &Client{sock: filepath.Join(runDir, runtime.AgentSock)}
	c.transport = &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialSocket(ctx, c.sock)
		},
		MaxIdleConns:        64,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true, // proxy bytes as they are
	}
	c.http = &http.Client{Transport: c.transport}
	return c
}

// Transport returns the round tripper that reaches the agent, for use with
// httputil.ReverseProxy or an http.Client.
func (c *Client) Transport() http.RoundTripper { return c.transport }

// Close drops idle connections to the agent.
func (c *Client) Close() { c.transport.CloseIdleConnections() }

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
		return nil, errdefs.Unavailable("AGENT_UNAVAILABLE", "agent socket %s does not exist (agent not running?)", path)
	}
	if err != nil {
		return nil, &errdefs.Error{Kind: errdefs.KindUnavailable, Code: "AGENT_UNAVAILABLE",
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
		return nil, errdefs.Unavailable("AGENT_SOCKET_INVALID", "refusing to connect: agent socket %s is a symlink (replaced from inside the sandbox?)", path)
	default:
		return nil, errdefs.Unavailable("AGENT_SOCKET_INVALID", "refusing to connect: %s is not a socket", path)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", "/proc/self/fd/"+strconv.Itoa(fd))
	if err != nil {
		return nil, &errdefs.Error{Kind: errdefs.KindUnavailable, Code: "AGENT_UNAVAILABLE",
			Message: fmt.Sprintf("connect to agent socket %s", path), Err: err}
	}
	return conn, nil
}

// Health reports whether the agent answers.
func (c *Client) Health(ctx context.Context) error {
	_, err := c.do(ctx, http.MethodGet, "/healthz", http.StatusOK)
	return err
}

// WaitReady polls Health until it succeeds or ctx is done. The poll is tight
// because instance start time is on the critical path.
func (c *Client) WaitReady(ctx context.Context) error {
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for {
		err := c.Health(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return &errdefs.Error{Kind: errdefs.KindUnavailable, Code: "AGENT_UNAVAILABLE",
				Message: "agent did not become ready", Err: err}
		case <-t.C:
		}
	}
}

// Shutdown asks the agent to stop every process (SIGTERM, then SIGKILL after
// grace) and exit. It returns once the agent has accepted; the agent exits
// when done.
func (c *Client) Shutdown(ctx context.Context, grace time.Duration) error {
	path := "/shutdown?graceSeconds=" + strconv.FormatFloat(grace.Seconds(), 'f', -1, 64)
	_, err := c.do(ctx, http.MethodPost, path, http.StatusAccepted)
	return err
}

func (c *Client) do(ctx context.Context, method, path string, want int) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, "http://agent"+path, nil)
	if err != nil {
		return nil, errdefs.Internal(err, "build agent request")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, errdefs.Unavailable("AGENT_UNAVAILABLE", "read agent response: %v", err)
	}
	if resp.StatusCode != want {
		return nil, responseError(resp.StatusCode, body)
	}
	return body, nil
}

// responseError rebuilds the errdefs error behind an agent error response.
func responseError(status int, body []byte) error {
	var er sdk.ErrorResponse
	if json.Unmarshal(body, &er) != nil || er.Error.Code == "" {
		er.Error = sdk.ErrorBody{Code: "AGENT_ERROR", Message: fmt.Sprintf("agent answered %d: %.200s", status, body)}
	}
	kind := errdefs.KindInternal
	switch status {
	case http.StatusBadRequest:
		kind = errdefs.KindInvalid
	case http.StatusUnauthorized:
		kind = errdefs.KindUnauthorized
	case http.StatusNotFound:
		kind = errdefs.KindNotFound
	case http.StatusConflict:
		kind = errdefs.KindConflict
	case http.StatusRequestEntityTooLarge:
		kind = errdefs.KindTooLarge
	case http.StatusServiceUnavailable:
		kind = errdefs.KindUnavailable
	case http.StatusInsufficientStorage:
		kind = errdefs.KindDiskFull
	}
	return &errdefs.Error{Kind: kind, Code: er.Error.Code, Message: er.Error.Message}
}
