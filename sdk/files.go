package sdk

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"

	"github.com/sbxhq/sbx/internal/dirtar"
)

// FileOption tunes Upload and UploadTar.
type FileOption func(url.Values)

// WithParents makes Upload create missing parent directories. It is the
// default; the option stays for callers that say it explicitly.
func WithParents() FileOption {
	return func(q url.Values) { q.Set("parents", "true") }
}

// WithoutParents makes Upload fail with PARENT_NOT_FOUND (404) instead of
// creating missing parent directories.
func WithoutParents() FileOption {
	return func(q url.Values) { q.Set("parents", "false") }
}

// Upload writes r to path inside the sandbox, replacing any file there, and
// returns the new file's info. The body is streamed, never held in memory. A
// zero mode takes the daemon's default (0644), or the replaced file's mode.
// Missing parent directories are created (see WithoutParents); a symlink at
// path is written through, the link stays, and the info is its target's.
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

// ListOption tunes ListFiles.
type ListOption func(url.Values)

// WithDepth lists depth levels: 1 (the default) is the directory's own
// entries, 2 adds the entries of its subdirectories, and so on, up to 32.
// Symlinked directories are listed but not entered. A listing of more than
// 50,000 entries fails with LIST_TOO_LARGE (400).
func WithDepth(depth int) ListOption {
	return func(q url.Values) { q.Set("depth", strconv.Itoa(depth)) }
}

// ListFiles returns the entries of the directory at path, sorted by name,
// each directory followed by its own entries when listing deeper.
func (c *Client) ListFiles(ctx context.Context, idOrName, path string, opts ...ListOption) ([]FileInfo, error) {
	q, err := fileQuery(idOrName, path)
	if err != nil {
		return nil, err
	}
	for _, o := range opts {
		o(q)
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

// Grep finds the lines of the text files under req.Path that hold
// req.Pattern.
func (c *Client) Grep(ctx context.Context, idOrName string, req GrepRequest) (*GrepResult, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	var res GrepResult
	if err := c.call(ctx, request{method: http.MethodPost, path: sandboxPath(idOrName, "/files/grep"), in: req}, &res); err != nil {
		return nil, err
	}
	return &res, nil
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

// UploadTar extracts the tar stream r (plain or gzip-compressed) into the
// directory dir inside the sandbox, creating dir and its parents unless
// WithoutParents is given, and returns dir's info. Names in the tar are
// relative to dir; a tar with an absolute name, a "..", an entry below a
// symlink or a special file (device, fifo) is refused whole (400,
// TAR_UNSAFE_PATH or TAR_UNSUPPORTED_ENTRY), and so is a file where dir
// holds a directory (409, TAR_CONFLICT): nothing changes unless everything
// is extracted.
func (c *Client) UploadTar(ctx context.Context, idOrName, dir string, r io.Reader, opts ...FileOption) (*FileInfo, error) {
	q, err := fileQuery(idOrName, dir)
	if err != nil {
		return nil, err
	}
	for _, o := range opts {
		o(q)
	}
	var fi FileInfo
	err = c.call(ctx, request{
		method:      http.MethodPut,
		path:        sandboxPath(idOrName, "/files/tar"),
		query:       q,
		body:        r,
		contentType: "application/x-tar",
	}, &fi)
	if err != nil {
		return nil, err
	}
	return &fi, nil
}

// DownloadTar returns the directory dir as a tar stream, names relative to
// dir: directories, regular files and symlinks (sockets, fifos and devices
// are left out). A stream cut by an error ends with a read error, never
// as a shorter tar. The caller must close it.
func (c *Client) DownloadTar(ctx context.Context, idOrName, dir string) (io.ReadCloser, error) {
	q, err := fileQuery(idOrName, dir)
	if err != nil {
		return nil, err
	}
	resp, err := c.send(ctx, request{method: http.MethodGet, path: sandboxPath(idOrName, "/files/tar"), query: q})
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// UploadDir copies the local directory localDir to dir inside the sandbox
// (made if missing), streaming it as a tar; see UploadTar.
func (c *Client) UploadDir(ctx context.Context, idOrName, localDir, dir string, opts ...FileOption) (*FileInfo, error) {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(dirtar.Write(pw, localDir)) }()
	fi, err := c.UploadTar(ctx, idOrName, dir, pr, opts...)
	pr.CloseWithError(io.ErrClosedPipe) // stops the writer if the upload ended early
	return fi, err
}

// DownloadDir copies the directory dir inside the sandbox to localDir
// (made if missing). The same safety rules as UploadTar apply on this side:
// no entry lands outside localDir, and nothing there changes unless the
// whole stream arrived.
func (c *Client) DownloadDir(ctx context.Context, idOrName, dir, localDir string) error {
	rc, err := c.DownloadTar(ctx, idOrName, dir)
	if err != nil {
		return err
	}
	defer rc.Close()
	_, statErr := os.Stat(localDir)
	if err := os.MkdirAll(localDir, 0o755); err != nil {
		return err
	}
	err = dirtar.Extract(rc, localDir)
	if err != nil && os.IsNotExist(statErr) {
		os.Remove(localDir) // made for this copy: gone again
	}
	return err
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
