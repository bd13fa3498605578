package image

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/treetar"
)

// CommitUpper stores a copy of an overlayfs upper directory as a new layer,
// for snapshots: put on top of the layers the upper was mounted over, it
// shows exactly the filesystem the sandbox saw.
//
// The layer keeps overlayfs's own format, as every layer under layers/ does:
// whiteouts stay 0/0 character devices and opaque directories keep
// trusted.overlay.opaque, which a lower layer honours just like an upper one.
// Other trusted.overlay.* attributes (origin, impure) only mean something in
// an upper directory and are dropped. The digest is the sha256 of the
// treetar stream of the tree, not of an OCI tar.
//
// The upper must not change meanwhile (the caller freezes or stops the
// sandbox). The layer stays pinned, so no removal deletes it, until the
// caller calls release, which it must do once the record that references
// the layer is written (or the commit is abandoned).
func (m *Manager) CommitUpper(ctx context.Context, upper string) (layer string, size int64, release func(), err error) {
	if fi, err := os.Stat(upper); err != nil || !fi.IsDir() {
		return "", 0, nil, errdefs.Internal(err, "commit layer: %s is not a directory", upper)
	}
	work, err := os.MkdirTemp(m.tmpDir, "commit-")
	if err != nil {
		return "", 0, nil, errdefs.Internal(err, "commit layer")
	}
	defer os.RemoveAll(work)
	staged := filepath.Join(work, "layer")
	if err := os.Mkdir(staged, 0o755); err != nil {
		return "", 0, nil, errdefs.Internal(err, "commit layer")
	}

	h, n := sha256.New(), &counter{}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(treetar.Pack(pw, upper)) }()
	src := io.TeeReader(&ctxReader{ctx, pr}, io.MultiWriter(h, n))
	err = treetar.Unpack(src, staged)
	if err == nil {
		_, err = io.Copy(io.Discard, src) // the end-of-archive blocks count too
	}
	pr.CloseWithError(errors.New("commit ended")) // stops Pack if Unpack failed
	if err != nil {
		return "", 0, nil, errdefs.Internal(err, "copy %s into a layer", upper)
	}
	if err := cleanOverlayAttrs(staged); err != nil {
		return "", 0, nil, err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if _, ok := m.reuse(sum); !ok {
		if err := m.commitLayer(staged, sum, n.n); err != nil {
			return "", 0, nil, err
		}
	}
	layer = "sha256:" + sum
	release = func() {
		m.mu.Lock()
		m.unpinLocked([]string{layer})
		m.mu.Unlock()
	}
	return layer, n.n, release, nil
}

// cleanOverlayAttrs drops the trusted.overlay.* attributes that have no
// meaning in a lower layer, and refuses the ones that would (redirects and
// metacopy, which sbx's mounts never enable): a layer must stand alone.
func cleanOverlayAttrs(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return errdefs.Internal(err, "commit layer")
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil // trusted.* attributes on a symlink are not ours to care about
		}
		names, err := listXattrs(p)
		if err != nil {
			return errdefs.Internal(err, "commit layer: list attributes of %s", p)
		}
		for _, name := range names {
			switch {
			case !strings.HasPrefix(name, "trusted.overlay."), name == "trusted.overlay.opaque":
			case name == "trusted.overlay.redirect", name == "trusted.overlay.metacopy":
				return errdefs.Internal(nil, "commit layer: %s has %s; overlay redirect_dir and metacopy are not supported", p, name)
			default:
				if err := unix.Lremovexattr(p, name); err != nil {
					return errdefs.Internal(err, "commit layer: remove %s from %s", name, p)
				}
			}
		}
		return nil
	})
}

func listXattrs(p string) ([]string, error) {
	sz, err := unix.Llistxattr(p, nil)
	if err != nil || sz <= 0 {
		if errors.Is(err, unix.ENOTSUP) {
			return nil, nil
		}
		return nil, err
	}
	buf := make([]byte, sz)
	if sz, err = unix.Llistxattr(p, buf); err != nil {
		return nil, err
	}
	var names []string
	for _, name := range strings.Split(string(buf[:sz]), "\x00") {
		if name != "" {
			names = append(names, name)
		}
	}
	return names, nil
}

// RemoveLayers deletes each of layers that no image references, no commit
// or import has pinned and inUse does not claim (see Remove), such as the
// layer of a deleted snapshot.
func (m *Manager) RemoveLayers(ctx context.Context, layers []string, inUse func(layers []string) bool) error {
	return m.removeUnused(ctx, layers, inUse)
}
