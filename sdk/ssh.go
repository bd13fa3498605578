package sdk

import (
	"context"
	"net/http"
	"net/url"
)

// CreateSSHAccess makes an SSH access token (or registers a public key) for
// a sandbox.
func (c *Client) CreateSSHAccess(ctx context.Context, idOrName string, req CreateSSHAccessRequest) (*SSHAccess, error) {
	var out SSHAccess
	if err := c.call(ctx, request{method: http.MethodPost, path: sandboxPath(idOrName, "/ssh-access"), in: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListSSHAccess lists a sandbox's SSH access (tokens without their secret).
func (c *Client) ListSSHAccess(ctx context.Context, idOrName string) ([]SSHAccess, error) {
	var out []SSHAccess
	if err := c.call(ctx, request{method: http.MethodGet, path: sandboxPath(idOrName, "/ssh-access")}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// RevokeSSHAccess revokes one SSH access of a sandbox; connections it opened
// are closed.
func (c *Client) RevokeSSHAccess(ctx context.Context, idOrName, accessID string) error {
	return c.call(ctx, request{method: http.MethodDelete, path: sandboxPath(idOrName, "/ssh-access/"+url.PathEscape(accessID))}, nil)
}
