package sandbox

import (
	"context"
	"path/filepath"

	"github.com/sbxhq/sbx/internal/store"
)

// Memory images in a shared blob store (S3). A memory snapshot's image
// (<data>/snapshots/<key>/memory, key being store.Snapshot.Key) is copied to
// snapshots/<key>/memory.tar.zst once the snapshot is made, so that another
// daemon on the same bucket can start a sandbox from it with its processes
// running: the first such start there fetches it (checked against the
// digest the store recorded) into its own snapshots directory and keeps it
// for the next ones. Deleting the snapshot deletes the object.
//
// A paused sandbox's memory image stays local: a paused sandbox cannot be
// archived (only a stopped one can, and stopping drops its memory), so no
// other daemon ever needs it.

func snapshotMemoryKey(key string) string {
	return "snapshots/" + key + "/memory.tar.zst"
}

// pushSnapshotMemory copies the memory image of snap, if it has one, to the
// shared blob store.
func (m *Manager) pushSnapshotMemory(ctx context.Context, snap *store.Snapshot) error {
	bs := m.sharedBlobs()
	if bs == nil || !snap.Memory {
		return nil
	}
	return pushTree(ctx, bs, snapshotMemoryKey(snap.Key), filepath.Join(m.snapshotDir(snap.Key), "memory"))
}

// pullSnapshotMemory fetches the memory image of snap into its snapshot
// directory unless it is there already. The caller holds the snapshot's
// name lock.
func (m *Manager) pullSnapshotMemory(ctx context.Context, snap *store.Snapshot) error {
	dir := filepath.Join(m.snapshotDir(snap.Key), "memory")
	bs := m.sharedBlobs()
	if bs == nil || exists(dir) {
		return nil
	}
	if err := pullTree(ctx, bs, snapshotMemoryKey(snap.Key), dir, "memory image of snapshot "+snap.Name); err != nil {
		return err
	}
	m.log.Info("fetched memory image from the blob store", "snapshot", snap.Name, "team", snap.Team)
	return nil
}

// dropSnapshotMemory deletes the shared copy of a deleted snapshot's memory
// image.
func (m *Manager) dropSnapshotMemory(ctx context.Context, snap *store.Snapshot) {
	bs := m.sharedBlobs()
	if bs == nil || !snap.Memory {
		return
	}
	if err := bs.Delete(ctx, snapshotMemoryKey(snap.Key)); err != nil {
		m.log.Warn("delete memory image of a deleted snapshot from the blob store", "snapshot", snap.Name, "err", err)
	}
}
