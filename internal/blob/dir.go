package blob

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Dir is a Store in a local directory: key "a/b" is the file <root>/a/b.
type Dir struct {
	root string
}

var _ Store = (*Dir)(nil)

// NewDir returns a Store in root, creating it (mode 0700) if missing.
func NewDir(root string) (*Dir, error) {
	if !filepath.IsAbs(root) {
		return nil, errdefs.Invalid(wire.CodeInvalidBlobDir, "blob directory %q must be an absolute path", root)
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, errdefs.Internal(err, "create blob directory %s", root)
	}
	return &Dir{root: root}, nil
}

func (d *Dir) path(key string) (string, error) {
	if err := CheckKey(key); err != nil {
		return "", err
	}
	return filepath.Join(d.root, filepath.FromSlash(key)), nil
}

// Put writes r to a temporary file next to the final one, syncs it and
// renames it into place, then syncs the directory: a crash leaves either the
// old object or the new one, and a temporary file that the next Put of the
// same key does not trip over.
func (d *Dir) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	p, err := d.path(key)
	if err != nil {
		return 0, err
	}
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, errdefs.Internal(err, "create blob directory")
	}
	tmp, err := os.CreateTemp(dir, ".put-*")
	if err != nil {
		return 0, errdefs.Internal(err, "create blob %s", key)
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	n, err := io.Copy(tmp, ctxReader{ctx, r})
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, errdefs.Internal(err, "write blob %s", key)
	}
	return n, nil
}

// Get opens the blob's file.
func (d *Dir) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	p, err := d.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errdefs.NotFound(wire.CodeBlobNotFound, "blob %s not found", key)
	}
	if err != nil {
		return nil, errdefs.Internal(err, "open blob %s", key)
	}
	return f, nil
}

// Delete removes the blob's file and any parent directories it leaves empty.
func (d *Dir) Delete(ctx context.Context, key string) error {
	p, err := d.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return errdefs.Internal(err, "delete blob %s", key)
	}
	for dir := filepath.Dir(p); dir != d.root && len(dir) > len(d.root); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil { // not empty (or gone): stop
			break
		}
	}
	return nil
}

// Exists reports whether the blob's file exists.
func (d *Dir) Exists(ctx context.Context, key string) (bool, error) {
	p, err := d.path(key)
	if err != nil {
		return false, err
	}
	_, err = os.Stat(p)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, errdefs.Internal(err, "stat blob %s", key)
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// ctxReader stops a copy once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
