package sdk

import (
	"context"
	"io"
	"net/http"
	"net/url"
)

// ListImages returns every image.
func (c *Client) ListImages(ctx context.Context) ([]Image, error) {
	var out []Image
	if err := c.call(ctx, request{method: http.MethodGet, path: "/v1/images"}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// GetImage returns the image called name.
func (c *Client) GetImage(ctx context.Context, name string) (*Image, error) {
	if err := checkName("image name", name); err != nil {
		return nil, err
	}
	var img Image
	if err := c.call(ctx, request{method: http.MethodGet, path: imagePath(name)}, &img); err != nil {
		return nil, err
	}
	return &img, nil
}

// RemoveImage removes an image; an image a sandbox uses gives a conflict error.
func (c *Client) RemoveImage(ctx context.Context, name string) error {
	if err := checkName("image name", name); err != nil {
		return err
	}
	return c.call(ctx, request{method: http.MethodDelete, path: imagePath(name)}, nil)
}

// ImportImage creates the image called name from a tar stream: a rootfs tree,
// an OCI image layout or a docker-save tarball, optionally gzip or zstd
// compressed. The stream is sent as it is read, never buffered whole.
func (c *Client) ImportImage(ctx context.Context, name string, tarStream io.Reader) (*Image, error) {
	if err := checkName("image name", name); err != nil {
		return nil, err
	}
	var img Image
	err := c.call(ctx, request{
		method:      http.MethodPost,
		path:        "/v1/images/import",
		query:       url.Values{"name": {name}},
		body:        tarStream,
		contentType: "application/x-tar",
	}, &img)
	if err != nil {
		return nil, err
	}
	return &img, nil
}

// PullImage pulls ref from a registry and stores it as name (ref when name is
// empty).
func (c *Client) PullImage(ctx context.Context, ref, name string) (*Image, error) {
	if err := checkName("image reference", ref); err != nil {
		return nil, err
	}
	var img Image
	if err := c.call(ctx, request{method: http.MethodPost, path: "/v1/images/pull", in: PullRequest{Ref: ref, Name: name}}, &img); err != nil {
		return nil, err
	}
	return &img, nil
}
