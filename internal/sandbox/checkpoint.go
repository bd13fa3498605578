package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/internal/treetar"
	"github.com/sbxhq/sbx/wire"
)

// Checkpoints. A Handoff saves a sandbox only when its pod goes away in
// order; a host that is lost takes everything written since with it. So a
// Kubernetes host also saves each running sandbox's files (its overlay's
// upper directory) every few minutes, as an archive and a manifest like a
// Handoff's (import.go) with Checkpoint set: the successor's TakeOver
// restores the newest of the two, and what came after it is lost.
//
// A checkpoint is written only by the pod that holds the sandbox's claim
// (the fencing token of import.go), never over a manifest saved later than
// it, and never over the archive the current manifest names: checkpoints
// alternate between two keys, the one the manifest does not name, and the
// one replaced is deleted after. Two keys and no more, so a checkpoint
// left by a host that died before its manifest is dropped with the rest.

// checkpointKeys are the two keys a sandbox's checkpoints alternate on.
func checkpointKeys(id string) [2]string {
	return [2]string{"sandboxes/" + id + "/checkpoint-a.tar.zst", "sandboxes/" + id + "/checkpoint-b.tar.zst"}
}

// nextCheckpointKey is the key of sandbox id's checkpoint key that cur
// (its manifest, nil when none) does not name.
func nextCheckpointKey(id string, cur *Transfer) string {
	keys := checkpointKeys(id)
	if cur != nil && cur.Spec.Archive != nil && cur.Spec.Archive.Key == keys[0] {
		return keys[1]
	}
	return keys[0]
}

func isCheckpointKey(key string) bool {
	return strings.HasPrefix(filepath.Base(key), "checkpoint-")
}

// Checkpointed is what one Checkpoint did.
type Checkpointed struct {
	// Fingerprint of the files as saved (or as found unchanged): pass it
	// to the next Checkpoint of the sandbox.
	Fingerprint string
	// Unchanged: the files were as Fingerprint says, nothing was written.
	Unchanged bool
	// Fenced: another pod holds the claim (or a newer copy was saved), so
	// this host wrote nothing.
	Fenced bool
	At     time.Time     // when the files were taken
	Bytes  int64         // archive bytes written
	Frozen time.Duration // how long the sandbox's processes were frozen
}

// Checkpoint saves a started sandbox's files to the blob store for pod
// (which must hold its claim) and owner (see Transfer), unless they are
// as fingerprint since (the previous call's Fingerprint) says. Its
// processes are frozen while the files are packed to a local file, so the
// copy is of one moment; the upload runs after they go on.
func (m *Manager) Checkpoint(ctx context.Context, id, owner, pod, since string) (res Checkpointed, err error) {
	ctx = context.WithoutCancel(ctx)
	if m.cfg.Blobs == nil {
		return res, errdefs.Unavailable(wire.CodeArchiveUnavailable, "this daemon has no blob store, so it cannot checkpoint sandbox %s", id)
	}
	sb, unlock, err := m.lock(ctx, id)
	if err != nil {
		return res, err
	}
	defer unlock()
	if sb.State != wire.StateStarted {
		return Checkpointed{Fingerprint: since, Unchanged: true}, nil // nothing runs: the last copy is as good
	}
	defer m.observe("checkpoint", "cluster", time.Now(), &err)
	upper := m.dirsOf(sb.ID).upper
	if sb.Spec.DiskMiB > 0 {
		upper = filepath.Join(m.dirsOf(sb.ID).root, "disk", "upper") // mounted while it runs (disk.go)
	}
	if fp, err := fingerprint(upper); err != nil || fp == since {
		return Checkpointed{Fingerprint: since, Unchanged: err == nil}, err
	}
	if holder, err := m.readClaim(ctx, id); err != nil || holder.Pod != pod {
		return Checkpointed{Fenced: err == nil}, err
	}

	tmp, err := os.CreateTemp(m.dirsOf(sb.ID).root, "checkpoint-*.tar")
	if err != nil {
		return res, errdefs.Internal(err, "checkpoint %s", id)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	f, err := m.freezer(sb)
	if err != nil {
		return res, err
	}
	// Frozen already (the lease watchdog, internal/kube/node/watchdog.go):
	// it stays so.
	was, err := f.Paused(ctx, sb.ID)
	if err != nil {
		return res, err
	}
	frozeAt := time.Now()
	if !was {
		if err := f.Pause(ctx, sb.ID); err != nil {
			return res, err
		}
	}
	res.At = time.Now().UTC()
	res.Fingerprint, err = fingerprint(upper)
	if err == nil {
		err = packTar(tmp, upper) // compressed after the thaw: the freeze is a copy only
	}
	if !was {
		if terr := f.Resume(ctx, sb.ID); err == nil {
			err = terr
		}
	}
	res.Frozen = time.Since(frozeAt)
	if err != nil {
		return res, errdefs.Internal(err, "checkpoint %s", id)
	}

	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return res, errdefs.Internal(err, "checkpoint %s", id)
	}
	cur, err := m.Manifest(ctx, id)
	if err != nil {
		return res, err
	}
	info := &store.ArchiveInfo{Key: nextCheckpointKey(id, cur), At: res.At}
	info.Size, info.SHA256, err = m.putZstd(ctx, info.Key, func(w io.Writer) error { // archive.go
		_, err := io.Copy(w, tmp)
		return err
	})
	if err != nil {
		return res, err
	}
	res.Bytes = info.Size
	if err := m.pushLayers(ctx, sb.Spec.Layers); err != nil { // layerblobs.go: the next host needs them
		m.cfg.Blobs.Delete(ctx, info.Key)
		return res, err
	}
	spec := sb.Spec
	spec.Archive = info
	tr := Transfer{ID: sb.ID, Owner: owner, Name: sb.Name, Team: sb.Team, CreatedAt: sb.CreatedAt, Spec: spec,
		Pod: pod, SavedAt: res.At, Checkpoint: true}
	written, err := m.putManifest(ctx, tr)
	if err != nil || !written {
		m.cfg.Blobs.Delete(ctx, info.Key)
		return Checkpointed{Fenced: err == nil}, err
	}
	return res, nil
}

// putManifest writes tr as its sandbox's manifest if tr.Pod holds the
// claim and no manifest saved later is there, then deletes the checkpoint
// archive the manifest it replaced named. written false: fenced. The blob
// store has no conditional writes, so a claim or manifest written between
// the reads here and the write can still be overwritten (a short window,
// docs/kubernetes/lifecycle.md).
func (m *Manager) putManifest(ctx context.Context, tr Transfer) (written bool, err error) {
	if tr.Pod != "" {
		if holder, err := m.readClaim(ctx, tr.ID); err != nil || (holder.Pod != "" && holder.Pod != tr.Pod) {
			return false, err
		}
	}
	old, err := m.readTransfer(ctx, tr.ID)
	if err != nil && errdefs.KindOf(err) != errdefs.KindNotFound {
		return false, err
	}
	if old != nil && old.SavedAt.After(tr.SavedAt) {
		m.log.Warn("a newer copy of the sandbox is saved: not writing an older one", "id", tr.ID, "saved", old.SavedAt, "mine", tr.SavedAt)
		return false, nil
	}
	b, err := json.Marshal(tr)
	if err != nil {
		return false, errdefs.Internal(err, "encode the manifest of %s", tr.ID)
	}
	if _, err := m.cfg.Blobs.Put(ctx, transferKey(tr.ID), bytes.NewReader(b)); err != nil {
		return false, err
	}
	if old != nil && old.Spec.Archive != nil && isCheckpointKey(old.Spec.Archive.Key) &&
		(tr.Spec.Archive == nil || old.Spec.Archive.Key != tr.Spec.Archive.Key) {
		if err := m.cfg.Blobs.Delete(ctx, old.Spec.Archive.Key); err != nil {
			m.log.Warn("delete a replaced checkpoint", "id", tr.ID, "key", old.Spec.Archive.Key, "err", err)
		}
	}
	return true, nil
}

// packTar writes upper as a tar (before zstd: the archive format of
// archive.go) to w.
func packTar(w io.Writer, upper string) error {
	if err := os.MkdirAll(upper, 0o755); err != nil { // never written to yet
		return err
	}
	return treetar.Pack(w, upper)
}

// fingerprint digests what tells whether anything under dir changed: each
// entry's path, mode, size, inode and change times (a write, chmod,
// rename or xattr change moves the ctime). "" for a directory not there.
func fingerprint(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir && os.IsNotExist(err) {
				return filepath.SkipAll
			}
			return err
		}
		fi, err := d.Info()
		if err != nil {
			if os.IsNotExist(err) {
				return nil // removed under the walk; the next fingerprint sees it
			}
			return err
		}
		var ino uint64
		var ctime, mtime int64
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			ino, ctime, mtime = st.Ino, st.Ctim.Nano(), st.Mtim.Nano()
		}
		fmt.Fprintf(h, "%s\x00%o\x00%d\x00%d\x00%d\x00%d\n", path[len(dir):], fi.Mode(), fi.Size(), ino, mtime, ctime)
		return nil
	})
	if err != nil {
		return "", errdefs.Internal(err, "read %s", dir)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Recovered says what a sandbox about to run for pod lost, given prev (the
// claim pod replaced: Claim's result) and tr (its manifest, nil when
// none); nil when it lost nothing. It lost something when another pod ran
// it last (prev) and that pod's host did not hand it off: then it comes
// back from the newest checkpoint or archive in tr, or fresh without one.
func Recovered(prev Claim, pod string, tr *Transfer, now time.Time) *wire.Recovery {
	if prev.Pod == "" || prev.Pod == pod {
		return nil // its first pod, or this pod again
	}
	// Manifests written before pods were recorded (Pod "") are handoffs.
	if tr != nil && !tr.Checkpoint && (tr.Pod == prev.Pod || tr.Pod == "") {
		return nil
	}
	rec := &wire.Recovery{At: now.UTC()}
	if tr == nil || tr.Spec.Archive == nil {
		rec.From = "fresh"
		rec.Message = "its host was lost before any of its files were saved: it started again from its spec, without them"
		return rec
	}
	saved := tr.SavedAt
	if saved.IsZero() {
		saved = tr.Spec.Archive.At
	}
	rec.SavedAt = &saved
	rec.From = "archive"
	if tr.Checkpoint {
		rec.From = "checkpoint"
	}
	rec.Message = fmt.Sprintf("its host was lost: restored from the %s saved at %s; changes to its files after that, and its processes, were lost",
		rec.From, saved.Format(time.RFC3339))
	return rec
}

// SetRecovery records on sandbox id that it came back as rec says (an
// event, and the API's recovery field).
func (m *Manager) SetRecovery(ctx context.Context, id string, rec *wire.Recovery) error {
	sb, unlock, err := m.lock(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	sb.Spec.Recovery = rec
	return m.cfg.Store.UpdateSandbox(ctx, sb, &store.Event{SandboxID: sb.ID, Time: rec.At, State: sb.State, Reason: "recovered-" + rec.From, Message: rec.Message})
}

// Freeze stops every process of started sandbox id where it is (frozen
// false: lets them go on), leaving its record as it is: a Kubernetes host
// that lost its lease keeps its sandboxes from running on beside their
// successors (internal/kube/node/watchdog.go).
func (m *Manager) Freeze(ctx context.Context, id string, frozen bool) error {
	sb, unlock, err := m.lock(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	if frozen {
		return m.freeze(ctx, sb)
	}
	return m.thaw(ctx, sb)
}
