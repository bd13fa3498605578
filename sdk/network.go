package sdk

import (
	"context"
	"net/http"
	"strconv"
)

// GetNetwork returns a sandbox's network mode, address and egress policy.
func (c *Client) GetNetwork(ctx context.Context, idOrName string) (*NetworkInfo, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	var out NetworkInfo
	if err := c.call(ctx, request{method: http.MethodGet, path: sandboxPath(idOrName, "/network")}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetEgress replaces a sandbox's egress policy. A running sandbox gets it at
// once: new connections follow it (open ones are kept).
func (c *Client) SetEgress(ctx context.Context, idOrName string, p EgressPolicy) (*NetworkInfo, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	var out NetworkInfo
	if err := c.call(ctx, request{method: http.MethodPut, path: sandboxPath(idOrName, "/egress"), in: p}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ExposePort exposes a port of a sandbox through the daemon's preview proxy.
// Exposing an exposed port again returns it unchanged.
func (c *Client) ExposePort(ctx context.Context, idOrName string, req ExposePortRequest) (*Port, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	var out Port
	if err := c.call(ctx, request{method: http.MethodPost, path: sandboxPath(idOrName, "/ports"), in: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListPorts returns a sandbox's exposed ports.
func (c *Client) ListPorts(ctx context.Context, idOrName string) ([]Port, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	var out []Port
	if err := c.call(ctx, request{method: http.MethodGet, path: sandboxPath(idOrName, "/ports")}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// UnexposePort removes an exposed port; its token stops working.
func (c *Client) UnexposePort(ctx context.Context, idOrName string, port int) error {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return err
	}
	return c.call(ctx, request{method: http.MethodDelete, path: sandboxPath(idOrName, "/ports/"+strconv.Itoa(port))}, nil)
}

// SignPortURL returns a preview URL for an exposed port that needs no key or
// token until it expires.
func (c *Client) SignPortURL(ctx context.Context, idOrName string, req SignPortRequest) (*SignedURL, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	var out SignedURL
	if err := c.call(ctx, request{method: http.MethodPost, path: sandboxPath(idOrName, "/signed-urls"), in: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
