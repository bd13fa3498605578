package sdk

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// CreateSecretRequest is the body of POST /v1/secrets. Name: 1 to 64 of
// A-Z, a-z, 0-9, '_', '-', '.'; Value at most 16 KiB. The value is kept
// encrypted and never returned.
type CreateSecretRequest struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// SecretInfo is what the API tells about a secret: never its value.
type SecretInfo struct {
	Name      string    `json:"name"`
	Team      string    `json:"team"`
	Size      int       `json:"size"` // of the value, in bytes
	CreatedAt time.Time `json:"createdAt"`
}

// CreateSecret stores a secret of the caller's team; an existing one of
// the same name is replaced.
func (c *Client) CreateSecret(ctx context.Context, name, value string) (*SecretInfo, error) {
	var out SecretInfo
	if err := c.call(ctx, request{method: http.MethodPost, path: "/v1/secrets", in: CreateSecretRequest{Name: name, Value: value}}, &out); err != nil {
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
