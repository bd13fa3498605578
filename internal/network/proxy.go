package network

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// The preview proxy reaches a port of a running bridge sandbox directly at
// its address over the bridge. Requests name the target as
// "<sandbox id>.sbx:<port>" (see TargetHost), so connections are pooled per
// sandbox and port and the address is looked up when a connection is made.

// TargetHost is the host part of a proxy URL for port of sandbox id.
func TargetHost(id string, port int) string {
	return id + ".sbx:" + strconv.Itoa(port)
}

func newTransport(m *Manager) *http.Transport {
	return &http.Transport{
		DialContext:           m.dialTarget,
		MaxIdleConnsPerHost:   32,
		IdleConnTimeout:       30 * time.Second,
		ResponseHeaderTimeout: 0, // long polls and streams are fine
		DisableCompression:    true,
		ForceAttemptHTTP2:     false,
	}
}

// Transport is the round tripper of the preview proxy: give it requests
// whose URL host is TargetHost(id, port).
func (m *Manager) Transport() http.RoundTripper { return m.transport }

func (m *Manager) dialTarget(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	id, ok := strings.CutSuffix(host, ".sbx")
	if !ok {
		return nil, errdefs.Invalid(wire.CodeInvalidTarget, "proxy target %q is not a sandbox", addr)
	}
	ip, ok := m.Address(id)
	if !ok {
		return nil, errdefs.Unavailable(wire.CodeSandboxUnavailable, "sandbox %s has no network address; is it running in bridge mode?", id)
	}
	var d net.Dialer
	d.Timeout = 10 * time.Second
	return d.DialContext(ctx, "tcp4", net.JoinHostPort(ip.String(), port))
}

// WaitPort waits until something accepts connections on port of a running
// bridge sandbox, up to timeout. The preview proxy calls it after starting
// a stopped sandbox, whose server needs a moment to listen.
func (m *Manager) WaitPort(ctx context.Context, id string, port int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	delay := 10 * time.Millisecond
	for {
		c, err := m.dialTarget(ctx, "tcp", TargetHost(id, port))
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
		delay = min(2*delay, 200*time.Millisecond)
	}
}
