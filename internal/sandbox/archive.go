package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/sbxhq/sbx/internal/diskspace"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/internal/treetar"
	"github.com/sbxhq/sbx/wire"
)

// Archiving moves a stopped sandbox's own filesystem layer (the overlay's
// upper directory) into the blob store as one tar+zstd stream and removes it
// from local disk; starting the sandbox restores it first.
//
//	stopped --archiving--> archived --restoring--> starting --> started
//
// Each step writes its intent first, and local data is removed only once
// its copy is safe, so Reconcile can finish or roll back a crash anywhere:
//
//   - archiving: the local upper is untouched until the blob has been
//     written, read back and verified and the record says "archived". A
//     crash before that rolls back to "stopped" and deletes the partial blob.
//   - archived: a local upper left by a crash after the record was written
//     is removed (the verified blob has it all).
//   - restoring: the blob is unpacked into upper.restore, checked against
//     its digest and renamed to upper in one step; the blob is deleted only
//     after the record leaves "restoring". A crash before the rename goes
//     back to "archived"; after it, on to "stopped".
//
// The tar keeps everything overlayfs needs (see package treetar), including
// whiteouts and opaque directories, so the restored view is identical.

// archiveKey is where a sandbox's archive lives in the blob store.
func archiveKey(id string) string { return "sandboxes/" + id + "/upper.tar.zst" }

// Archive packs a stopped sandbox into the blob store. Archiving an archived
// sandbox is a no-op; a started one must be stopped first.
func (m *Manager) Archive(ctx context.Context, idOrName string) (*store.Sandbox, error) {
	ctx = context.WithoutCancel(ctx)
	sb, unlock, err := m.lock(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	defer unlock()
	switch out, err := decide(opArchive, sb); out {
	case refuse:
		return nil, err
	case noop:
		return sb, nil
	}
	if err := m.archiveLocked(ctx, sb, "user"); err != nil {
		return nil, err
	}
	return sb, nil
}

// archiveLocked archives a locked, stopped sandbox.
func (m *Manager) archiveLocked(ctx context.Context, sb *store.Sandbox, reason string) (err error) {
	defer m.observe("archive", reason, time.Now(), &err)
	if m.cfg.Blobs == nil {
		return errdefs.Unavailable(wire.CodeArchiveUnavailable, "this daemon has no blob store, so it cannot archive")
	}
	if err := m.transition(ctx, sb, wire.StateArchiving, reason, ""); err != nil {
		return err
	}
	info, err := m.pack(ctx, sb)
	if err == nil {
		err = m.pushLayers(ctx, sb.Spec.Layers) // layerblobs.go: for other daemons
	}
	if err != nil {
		m.cfg.Blobs.Delete(ctx, archiveKey(sb.ID))
		m.transition(ctx, sb, wire.StateStopped, "archive-failed", err.Error())
		return err
	}
	sb.Spec.Archive = info
	if err := m.transition(ctx, sb, wire.StateArchived, reason, fmt.Sprintf("%d bytes in the blob store", info.Size)); err != nil {
		sb.Spec.Archive = nil
		return err // still "archiving" in the store: Reconcile rolls back
	}
	m.removeLocalFS(sb)
	return nil
}

// pack streams the sandbox's upper directory through zstd into the blob
// store, then reads the blob back to check it whole.
func (m *Manager) pack(ctx context.Context, sb *store.Sandbox) (*store.ArchiveInfo, error) {
	var info *store.ArchiveInfo
	err := m.withLocalUpper(sb, func(upper string) error {
		if _, err := os.Stat(upper); errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll(upper, 0o755); err != nil { // never started: nothing written yet
				return errdefs.Internal(err, "create upper directory of %s", sb.ID)
			}
		}
		// putZstd returns once the packer is done: it reads upper, which
		// must be before the disk is unmounted.
		n, sum, err := m.putZstd(ctx, archiveKey(sb.ID), func(w io.Writer) error { return treetar.Pack(w, upper) })
		if diskspace.IsNoSpace(err) {
			return diskspace.Full(err, "archive sandbox "+sb.ID)
		}
		if err != nil && errdefs.CodeOf(err) != wire.CodeInternal {
			return err // the blob store's own words: unreachable, credentials refused, …
		}
		if err != nil {
			return errdefs.Internal(err, "archive sandbox %s", sb.ID)
		}
		info = &store.ArchiveInfo{Key: archiveKey(sb.ID), SHA256: sum, Size: n, At: time.Now().UTC()}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := m.verifyArchive(ctx, info); err != nil {
		return nil, err
	}
	return info, nil
}

// putZstd stores under key what write writes, compressed with zstd, and
// returns the stored size and the hex SHA-256 of the stored bytes. It
// returns only when write has returned.
func (m *Manager) putZstd(ctx context.Context, key string, write func(io.Writer) error) (int64, string, error) {
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		zw, err := zstd.NewWriter(pw, zstd.WithEncoderConcurrency(1))
		if err == nil {
			err = write(zw)
			if cerr := zw.Close(); err == nil {
				err = cerr
			}
		}
		pw.CloseWithError(err)
	}()
	h := sha256.New()
	n, err := m.cfg.Blobs.Put(ctx, key, io.TeeReader(pr, h))
	pr.CloseWithError(errors.New("blob store stopped reading")) // unblocks the writer if Put failed early
	<-done
	return n, hex.EncodeToString(h.Sum(nil)), err
}

// verifyArchive reads the blob back: its digest must match and it must
// decompress into a complete tar stream.
func (m *Manager) verifyArchive(ctx context.Context, info *store.ArchiveInfo) error {
	rc, err := m.cfg.Blobs.Get(ctx, info.Key)
	if err != nil {
		return err
	}
	defer rc.Close()
	h := sha256.New()
	zr, err := zstd.NewReader(io.TeeReader(rc, h), zstd.WithDecoderConcurrency(1))
	if err != nil {
		return errdefs.Internal(err, "verify archive %s", info.Key)
	}
	defer zr.Close()
	if err := treetar.Check(zr); err != nil {
		return errdefs.Internal(err, "verify archive %s", info.Key)
	}
	io.Copy(io.Discard, rc) // any trailing bytes count too
	if got := hex.EncodeToString(h.Sum(nil)); got != info.SHA256 {
		return errdefs.Internal(nil, "archive %s reads back with digest %s, want %s", info.Key, got, info.SHA256)
	}
	return nil
}

// restoreLocked brings an archived sandbox's files back and leaves it in
// state "starting", ready for startInstance.
func (m *Manager) restoreLocked(ctx context.Context, sb *store.Sandbox, reason string) (err error) {
	defer m.observe("restore", reason, time.Now(), &err)
	info := sb.Spec.Archive
	if info == nil {
		return errdefs.Internal(nil, "sandbox %s is archived but its record names no archive", sb.ID)
	}
	if m.cfg.Blobs == nil {
		return errdefs.Unavailable(wire.CodeArchiveUnavailable, "this daemon has no blob store, so it cannot restore sandbox %s", refOf(sb))
	}
	if err := m.transition(ctx, sb, wire.StateRestoring, reason, ""); err != nil {
		return err
	}
	if err := m.unpack(ctx, sb, info); err != nil {
		m.transition(ctx, sb, wire.StateArchived, "restore-failed", err.Error())
		return err
	}
	sb.Spec.Archive = nil
	if err := m.transition(ctx, sb, wire.StateStarting, reason, "restored from the archive"); err != nil {
		sb.Spec.Archive = info
		return err // still "restoring" with the upper in place: Reconcile goes on
	}
	if err := m.cfg.Blobs.Delete(ctx, info.Key); err != nil {
		m.log.Warn("delete restored archive", "id", sb.ID, "key", info.Key, "err", err)
	}
	return nil
}

// unpack restores the archive into upper.restore, checks its digest and
// renames it into place.
func (m *Manager) unpack(ctx context.Context, sb *store.Sandbox, info *store.ArchiveInfo) error {
	return m.withLocalUpper(sb, func(upper string) error {
		tmp := upper + ".restore"
		if err := os.RemoveAll(tmp); err != nil {
			return errdefs.Internal(err, "clear %s", tmp)
		}
		if err := os.MkdirAll(tmp, 0o700); err != nil {
			return errdefs.Internal(err, "create %s", tmp)
		}
		rc, err := m.cfg.Blobs.Get(ctx, info.Key)
		if err != nil {
			return err
		}
		defer rc.Close()
		h := sha256.New()
		zr, err := zstd.NewReader(io.TeeReader(rc, h), zstd.WithDecoderConcurrency(1))
		if err != nil {
			return errdefs.Internal(err, "read archive of %s", sb.ID)
		}
		defer zr.Close()
		if err := treetar.Unpack(zr, tmp); err != nil {
			os.RemoveAll(tmp)
			if diskspace.IsNoSpace(err) {
				return diskspace.Full(err, "restore the archive of "+sb.ID)
			}
			if errdefs.CodeOf(err) != wire.CodeInternal {
				return err // the blob store's own words: BLOB_CORRUPT, unreachable, …
			}
			// Say why: most likely the archive was damaged in the store.
			return errdefs.Internal(err, "restore archive of %s: it is damaged or unreadable (%v); the archive is kept", sb.ID, err)
		}
		io.Copy(io.Discard, zr)
		io.Copy(io.Discard, rc)
		if got := hex.EncodeToString(h.Sum(nil)); got != info.SHA256 {
			os.RemoveAll(tmp)
			return errdefs.Internal(nil, "archive of %s has digest %s, want %s: it was changed or damaged", sb.ID, got, info.SHA256)
		}
		// Leftovers of an interrupted restore or an empty dir from a mount: not data.
		if err := os.RemoveAll(upper); err != nil {
			return errdefs.Internal(err, "clear %s", upper)
		}
		if err := os.RemoveAll(filepath.Join(filepath.Dir(upper), "work")); err != nil {
			return errdefs.Internal(err, "clear work directory of %s", sb.ID)
		}
		if err := os.Rename(tmp, upper); err != nil {
			return errdefs.Internal(err, "install restored files of %s", sb.ID)
		}
		return nil
	})
}

// withLocalUpper calls fn with the sandbox's upper directory, mounting the
// sandbox's own disk around the call if it has one (disk.go). Unlike
// withUpper (snapshot.go) it does not create the directory: whether it
// exists tells Reconcile whether a restore got as far as its rename.
func (m *Manager) withLocalUpper(sb *store.Sandbox, fn func(upper string) error) error {
	if sb.Spec.DiskMiB == 0 {
		if err := os.MkdirAll(m.dirsOf(sb.ID).root, 0o700); err != nil {
			return errdefs.Internal(err, "create sandbox directory")
		}
		return fn(m.dirsOf(sb.ID).upper)
	}
	upper, _, err := m.diskDirs(sb)
	if err != nil {
		return err
	}
	err = fn(upper)
	if uerr := m.unmountDisk(sb.ID); err == nil && uerr != nil {
		err = errdefs.Internal(uerr, "unmount the disk of %s", sb.ID)
	}
	return err
}

// removeLocalFS removes the local copy of an archived sandbox's files.
func (m *Manager) removeLocalFS(sb *store.Sandbox) {
	d := m.dirsOf(sb.ID)
	paths := []string{d.upper, d.work, d.upper + ".restore"}
	if sb.Spec.DiskMiB > 0 {
		paths = append(paths, filepath.Join(d.root, "disk.img")) // the disk's image file (disk.go)
	}
	for _, p := range paths {
		if err := os.RemoveAll(p); err != nil {
			m.log.Warn("remove archived files", "id", sb.ID, "path", p, "err", err)
		}
	}
}

// blobOutageWait is how long a delete waits for an unreachable blob store
// to come back (a restart, a network blip) before it fails.
var blobOutageWait = 30 * time.Second

// deleteArchive removes a sandbox's archive, if it has one, for a delete.
// A blob store that is unreachable is tried again for blobOutageWait, so a
// short outage delays a delete instead of leaving the sandbox in error
// (delete-failed) for its owner to delete again.
func (m *Manager) deleteArchive(ctx context.Context, sb *store.Sandbox) error {
	if m.cfg.Blobs == nil {
		return nil
	}
	deadline := time.Now().Add(blobOutageWait)
	for {
		err := m.cfg.Blobs.Delete(ctx, archiveKey(sb.ID))
		if err == nil {
			return nil
		}
		if !errdefs.Is(err, errdefs.KindUnavailable) || time.Now().After(deadline) {
			return errdefs.Internal(err, "delete the archive of %s", sb.ID)
		}
		select {
		case <-ctx.Done():
			return errdefs.Internal(err, "delete the archive of %s", sb.ID)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// reconcileArchive finishes or rolls back an archive or restore that a
// crash interrupted (see the top of this file).
func (m *Manager) reconcileArchive(ctx context.Context, sb *store.Sandbox) error {
	if err := m.stopInstance(ctx, sb, StopOptions{Force: true}); err != nil {
		return err
	}
	switch sb.State {
	case wire.StateArchiving:
		if m.cfg.Blobs != nil {
			if err := m.cfg.Blobs.Delete(ctx, archiveKey(sb.ID)); err != nil {
				return err
			}
		}
		sb.Spec.Archive = nil
		return m.transition(ctx, sb, wire.StateStopped, "reconcile", "the archive was interrupted; the files stayed local")
	case wire.StateArchived:
		m.removeLocalFS(sb)
		return nil
	case wire.StateRestoring:
		restored := false
		err := m.withLocalUpper(sb, func(upper string) error {
			_, err := os.Stat(upper)
			restored = err == nil
			return nil
		})
		if err != nil {
			return err
		}
		if !restored {
			m.removeLocalFS(sb)
			return m.transition(ctx, sb, wire.StateArchived, "reconcile", "the restore was interrupted; the archive is kept")
		}
		info := sb.Spec.Archive
		sb.Spec.Archive = nil
		if err := m.transition(ctx, sb, wire.StateStopped, "reconcile", "restored from the archive"); err != nil {
			return err
		}
		if info != nil && m.cfg.Blobs != nil {
			if err := m.cfg.Blobs.Delete(ctx, info.Key); err != nil {
				m.log.Warn("delete restored archive", "id", sb.ID, "err", err)
			}
		}
	}
	return nil
}
