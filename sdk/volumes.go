package sdk

import (
	"context"
	"net/http"
	"net/url"
)

// CreateVolume makes a named volume; mount it at create with
// CreateSandboxRequest.Volumes.
func (c *Client) CreateVolume(ctx context.Context, req CreateVolumeRequest) (*Volume, error) {
	var out Volume
	if err := c.call(ctx, request{method: http.MethodPost, path: "/v1/volumes", in: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListVolumes returns every volume, by name.
func (c *Client) ListVolumes(ctx context.Context) ([]Volume, error) {
	var out []Volume
	if err := c.call(ctx, request{method: http.MethodGet, path: "/v1/volumes"}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// GetVolume returns the volume called name.
func (c *Client) GetVolume(ctx context.Context, name string) (*Volume, error) {
	if err := checkName("volume name", name); err != nil {
		return nil, err
	}
	var out Volume
	if err := c.call(ctx, request{method: http.MethodGet, path: "/v1/volumes/" + url.PathEscape(name)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteVolume deletes a volume and its files. While a sandbox mounts it
// the answer is a conflict (VOLUME_IN_USE) unless force.
func (c *Client) DeleteVolume(ctx context.Context, name string, force bool) error {
	if err := checkName("volume name", name); err != nil {
		return err
	}
	q := url.Values{}
	if force {
		q.Set("force", "true")
	}
	return c.call(ctx, request{method: http.MethodDelete, path: "/v1/volumes/" + url.PathEscape(name), query: q}, nil)
}
