package sandbox

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/sbxhq/sbx/internal/blob"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/treetar"
	"github.com/sbxhq/sbx/wire"
)

// Layers in a shared blob store (S3). A sandbox's archive holds only its
// own writes; its image and snapshot layers live in the daemon's layer
// store. So that another daemon pointing at the same bucket can restore it,
// or start a sandbox from a snapshot taken here, archiving and snapshotting
// also copy every layer the sandbox stands on to layers/<digest>.tar.zst
// (once: layers are named by digest), and starting a sandbox fetches the
// layers its daemon lacks. A local blob directory gets no layers: the
// layer store is on the same disk already.

// SharedBlobs is a blob.Store other hosts read too (the S3 store).
type SharedBlobs interface {
	blob.Store
	Shared() bool
}

func (m *Manager) sharedBlobs() blob.Store {
	if s, ok := m.cfg.Blobs.(SharedBlobs); ok && s.Shared() {
		return s
	}
	return nil
}

func layerKey(digest string) string {
	return "layers/" + filepath.Base(strings.TrimPrefix(digest, "sha256:")) + ".tar.zst"
}

// pushLayers copies to the shared blob store each of layers it lacks.
func (m *Manager) pushLayers(ctx context.Context, layers []string) error {
	bs := m.sharedBlobs()
	if bs == nil {
		return nil
	}
	dirs := m.cfg.Images.LayerDirs(layers)
	for i, l := range layers {
		ok, err := bs.Exists(ctx, layerKey(l))
		if err != nil {
			return err
		}
		if ok {
			continue
		}
		if err := pushTree(ctx, bs, layerKey(l), dirs[i]); err != nil {
			return err
		}
	}
	return nil
}

// pullLayers fetches from the shared blob store each of layers missing from
// the layer store: unpacked beside it, then renamed into place whole.
func (m *Manager) pullLayers(ctx context.Context, layers []string) error {
	bs := m.sharedBlobs()
	if bs == nil {
		return nil
	}
	dirs := m.cfg.Images.LayerDirs(layers)
	for i, l := range layers {
		if _, err := os.Stat(dirs[i]); !errors.Is(err, os.ErrNotExist) {
			continue // here (or unreadable: the mount will say)
		}
		if err := pullTree(ctx, bs, layerKey(l), dirs[i], "layer "+l); err != nil {
			return err
		}
		m.log.Info("fetched layer from the blob store", "layer", l)
	}
	return nil
}

// pushTree stores the tree under dir at key, packed (treetar) and
// compressed (zstd) as it streams: no copy on disk or in memory.
func pushTree(ctx context.Context, bs blob.Store, key, dir string) error {
	pr, pw := io.Pipe()
	go func() {
		zw, err := zstd.NewWriter(pw, zstd.WithEncoderConcurrency(1))
		if err == nil {
			err = treetar.Pack(zw, dir)
			if cerr := zw.Close(); err == nil {
				err = cerr
			}
		}
		pw.CloseWithError(err)
	}()
	_, err := bs.Put(ctx, key, pr)
	pr.CloseWithError(errors.New("blob store stopped reading"))
	return err
}

// pullTree unpacks the object at key (made by pushTree) beside dir, then
// renames it into place whole, so that dir exists only complete and
// checked (the store verifies the object's digest at its end).
func pullTree(ctx context.Context, bs blob.Store, key, dir, what string) error {
	tmp := filepath.Join(filepath.Dir(dir), ".pull-"+filepath.Base(dir))
	if err := os.RemoveAll(tmp); err != nil {
		return errdefs.Internal(err, "clear %s", tmp)
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return errdefs.Internal(err, "create %s", tmp)
	}
	rc, err := bs.Get(ctx, key)
	if err != nil {
		os.RemoveAll(tmp)
		return err
	}
	defer rc.Close()
	zr, err := zstd.NewReader(rc, zstd.WithDecoderConcurrency(1))
	if err != nil {
		os.RemoveAll(tmp)
		return errdefs.Internal(err, "read %s", what)
	}
	defer zr.Close()
	err = treetar.Unpack(zr, tmp)
	if err == nil {
		_, err = io.Copy(io.Discard, zr) // to the end: the store checks its digest there
	}
	if err != nil {
		os.RemoveAll(tmp)
		if errdefs.CodeOf(err) != wire.CodeInternal {
			return err
		}
		return errdefs.Internal(err, "fetch %s from the blob store: %v", what, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		return errdefs.Internal(err, "install %s", what)
	}
	return nil
}
