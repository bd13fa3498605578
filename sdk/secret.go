package sdk

import (
	"context"
	"net/http"
	"net/url"
)

// CreateSecret stores a secret of the caller's team; an existing one of
// the same name is replaced.
func (c *Client) CreateSecret(ctx context.Context, req CreateSecretRequest) (*SecretInfo, error) {
	var out SecretInfo
	if err := c.call(ctx, request{method: http.MethodPost, path: "/v1/secrets", in: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetSecretHosts replaces where a secret of the caller's team may be sent.
func (c *Client) SetSecretHosts(ctx context.Context, name string, h SecretHosts) (*SecretInfo, error) {
	if err := checkName("secret name", name); err != nil {
		return nil, err
	}
	var out SecretInfo
	if err := c.call(ctx, request{method: http.MethodPut, path: "/v1/secrets/" + url.PathEscape(name) + "/hosts", in: h}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListSecrets lists the caller's team's secrets (names and metadata).
func (c *Client) ListSecrets(ctx context.Context) ([]SecretInfo, error) {
	var out []SecretInfo
	if err := c.call(ctx, request{method: http.MethodGet, path: "/v1/secrets"}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteSecret deletes a secret; rules that name it then fail their requests.
func (c *Client) DeleteSecret(ctx context.Context, name string) error {
	if err := checkName("secret name", name); err != nil {
		return err
	}
	return c.call(ctx, request{method: http.MethodDelete, path: "/v1/secrets/" + url.PathEscape(name)}, nil)
}
