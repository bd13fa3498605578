package agentapi

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// UpgradeTCP is the Upgrade token of ForwardTCP: after the 101 answer the
// connection to the agent carries the bytes of one TCP connection.
const UpgradeTCP = "tcp"

// DialTCP asks the agent to connect to host:port from inside the sandbox
// (so 127.0.0.1 is the sandbox's loopback) and returns that connection,
// tunnelled over the agent socket. Used by the SSH gateway's port
// forwarding; it works whatever the sandbox's network mode or class.
func (c *Client) DialTCP(ctx context.Context, host string, port int) (io.ReadWriteCloser, error) {
	q := url.Values{"host": {host}, "port": {strconv.Itoa(port)}}
	req, err := http.NewRequestWithContext(ctx, ForwardTCP.Method, agentURL(ForwardTCP.Path, q.Encode()), nil)
	if err != nil {
		return nil, errdefs.Internal(err, "build agent request")
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", UpgradeTCP)
	resp, err := observed{c.transport}.RoundTrip(req)
	if err != nil {
		return nil, transportError(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, MaxAnswer))
		return nil, responseError(resp.StatusCode, b)
	}
	rwc, ok := resp.Body.(io.ReadWriteCloser)
	if !ok {
		resp.Body.Close()
		return nil, errdefs.Unavailable(wire.CodeAgentError, "the agent's upgraded connection is not writable")
	}
	return rwc, nil
}
