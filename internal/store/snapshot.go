package store

import (
	"context"
	"time"
)

// Snapshot is a saved sandbox that new sandboxes start from: its filesystem
// as one more read-only layer on top of its image's, and for class "gvisor"
// optionally a memory image (the files of which the sandbox Manager keeps
// under <data>/snapshots/<name>/).
type Snapshot struct {
	Name      string // unique across teams (its memory files are kept by name)
	Team      string // owner; CreateSnapshot stamps the caller's team when ""
	SandboxID string // the sandbox it was taken from; it may be gone since
	// Spec is the source sandbox's spec when the snapshot was taken; its
	// Layers end with the snapshot's own layer.
	Spec      Spec
	Memory    bool  // a memory image was saved with it
	SizeBytes int64 // its own layer, plus the memory image
	CreatedAt time.Time
	// TTLSeconds is how long the snapshot lives unused; each sandbox created
	// from it moves ExpiresAt to then plus TTLSeconds. 0: forever.
	TTLSeconds int
	ExpiresAt  time.Time // zero: never
}

// SnapshotStore persists snapshots. Like the Store's sandbox methods, each
// is scoped to the team of the principal in ctx.
//
// Errors: CreateSnapshot gives a Conflict (code SNAPSHOT_EXISTS) for a taken
// name; GetSnapshot, SetSnapshotExpiry and DeleteSnapshot give a NotFound
// (code SNAPSHOT_NOT_FOUND) for a missing one.
type SnapshotStore interface {
	CreateSnapshot(ctx context.Context, s *Snapshot) error
	GetSnapshot(ctx context.Context, name string) (*Snapshot, error)
	// ListSnapshots returns every snapshot, oldest first.
	ListSnapshots(ctx context.Context) ([]*Snapshot, error)
	// SetSnapshotExpiry sets ExpiresAt; the zero time means never.
	SetSnapshotExpiry(ctx context.Context, name string, expiresAt time.Time) error
	DeleteSnapshot(ctx context.Context, name string) error
}
