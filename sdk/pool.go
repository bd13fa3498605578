package sdk

import (
	"context"
	"net/http"
	"net/url"
)

// A warm pool keeps started sandboxes of one template ready, so that a
// create whose spec matches (or that names the pool) takes one at once
// instead of starting an instance. The taken instance gets the create's
// name, labels, environment, egress and lifecycle policy without a
// restart, and the pool starts a replacement in the background.

// CreatePool makes a warm pool and starts filling it.
func (c *Client) CreatePool(ctx context.Context, req CreatePoolRequest) (*Pool, error) {
	var out Pool
	if err := c.call(ctx, request{method: http.MethodPost, path: "/v1/pools", in: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListPools returns the team's pools, by name.
func (c *Client) ListPools(ctx context.Context) ([]Pool, error) {
	var out []Pool
	if err := c.call(ctx, request{method: http.MethodGet, path: "/v1/pools"}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// GetPool returns the pool called name.
func (c *Client) GetPool(ctx context.Context, name string) (*Pool, error) {
	if err := checkName("pool name", name); err != nil {
		return nil, err
	}
	var out Pool
	if err := c.call(ctx, request{method: http.MethodGet, path: "/v1/pools/" + url.PathEscape(name)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdatePool resizes a pool.
func (c *Client) UpdatePool(ctx context.Context, name string, req UpdatePoolRequest) (*Pool, error) {
	if err := checkName("pool name", name); err != nil {
		return nil, err
	}
	var out Pool
	if err := c.call(ctx, request{method: http.MethodPatch, path: "/v1/pools/" + url.PathEscape(name), in: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeletePool deletes a pool and the instances waiting in it. Sandboxes
// already adopted from it are not touched.
func (c *Client) DeletePool(ctx context.Context, name string) error {
	if err := checkName("pool name", name); err != nil {
		return err
	}
	return c.call(ctx, request{method: http.MethodDelete, path: "/v1/pools/" + url.PathEscape(name)}, nil)
}
