package sdk

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
)

// FileOption tunes Upload.
type FileOption func(url.Values)

// WithParents makes Upload create missing parent directories.
func WithParents() FileOption {
	return func(q url.Values) { q.Set("parents", "true") }
}

// Upload writes r to path inside the sandbox, replacing any file there, and
// returns the new file's info. The body is streamed, never held in memory. A
// zero mode takes the daemon's default (0644).
func (c *Client) Upload(ctx context.Context, idOrName, path string, r io.Reader, mode os.FileMode, opts ...FileOption) (*FileInfo, error) {
	q, err := fileQuery(idOrName, path)
	if err != nil {
		return nil, err
	}
	if mode != 0 {
		q.Set("mode", fmt.Sprintf("%04o", mode.Perm()))
	}
	for _, o := range opts {
		o(q)
	}
	var fi FileInfo
	err = c.call(ctx, request{
		method:      http.MethodPut,
		path:        sandboxPath(idOrName, "/files"),
		query:       q,
		body:        r,
		contentType: "application/octet-stream",
	}, &fi)
	if err != nil {
		return nil, err
	}
	return &fi, nil
}

// Download returns the contents of the file at path. The caller must close it.
func (c *Client) Download(ctx context.Context, idOrName, path string) (io.ReadCloser, error) {
	q, err := fileQuery(idOrName, path)
	if err != nil {
		return nil, err
	}
	resp, err := c.send(ctx, request{method: http.MethodGet, path: sandboxPath(idOrName, "/files"), query: q})
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// ListFiles returns the entries of the directory at path.
func (c *Client) ListFiles(ctx context.Context, idOrName, path string) ([]FileInfo, error) {
	q, err := fileQuery(idOrName, path)
	if err != nil {
		return nil, err
	}
	var out []FileInfo
	if err := c.call(ctx, request{method: http.MethodGet, path: sandboxPath(idOrName, "/files/list"), query: q}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// StatFile returns the info of the file at path; symlinks are not followed.
func (c *Client) StatFile(ctx context.Context, idOrName, path string) (*FileInfo, error) {
	q, err := fileQuery(idOrName, path)
	if err != nil {
		return nil, err
	}
	var fi FileInfo
	if err := c.call(ctx, request{method: http.MethodGet, path: sandboxPath(idOrName, "/files/stat"), query: q}, &fi); err != nil {
		return nil, err
	}
	return &fi, nil
}

// Mkdir creates a directory.
func (c *Client) Mkdir(ctx context.Context, idOrName string, req MkdirRequest) (*FileInfo, error) {
	return c.filePost(ctx, idOrName, "/files/mkdir", req)
}

// Move renames a file or directory.
func (c *Client) Move(ctx context.Context, idOrName string, req MoveRequest) (*FileInfo, error) {
	return c.filePost(ctx, idOrName, "/files/move", req)
}

// RemoveFile removes the file at path; a non-empty directory needs recursive.
func (c *Client) RemoveFile(ctx context.Context, idOrName, path string, recursive bool) error {
	q, err := fileQuery(idOrName, path)
	if err != nil {
		return err
	}
	if recursive {
		q.Set("recursive", "true")
	}
	return c.call(ctx, request{method: http.MethodDelete, path: sandboxPath(idOrName, "/files"), query: q}, nil)
}

func (c *Client) filePost(ctx context.Context, idOrName, suffix string, in any) (*FileInfo, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	var fi FileInfo
	if err := c.call(ctx, request{method: http.MethodPost, path: sandboxPath(idOrName, suffix), in: in}, &fi); err != nil {
		return nil, err
	}
	return &fi, nil
}

func fileQuery(idOrName, path string) (url.Values, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	if err := checkName("file path", path); err != nil {
		return nil, err
	}
	return url.Values{"path": {path}}, nil
}
