package sdk

import (
	"context"
	"net/http"
	"net/url"
)

// MountBucket mounts an S3 bucket (or a prefix of it) into the running
// sandbox idOrName (class container) at b.Path. The keys stay on the host;
// the answer leaves them out. The mount lasts until the sandbox stops.
func (c *Client) MountBucket(ctx context.Context, idOrName string, b BucketMount) (*BucketMount, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	var out BucketMount
	if err := c.call(ctx, request{method: http.MethodPost, path: sandboxPath(idOrName, "/buckets"), in: b}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UnmountBucket unmounts the bucket MountBucket mounted at path.
func (c *Client) UnmountBucket(ctx context.Context, idOrName, path string) error {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return err
	}
	return c.call(ctx, request{method: http.MethodDelete, path: sandboxPath(idOrName, "/buckets"), query: url.Values{"path": {path}}}, nil)
}
