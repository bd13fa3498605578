package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"
)

// Snapshot is a saved sandbox that new sandboxes start from: its filesystem
// as one more read-only layer on top of its image's, and for class "gvisor"
// optionally a memory image (the files of which the sandbox Manager keeps
// under <data>/snapshots/<Key>/).
type Snapshot struct {
	Name string // unique within its team
	Team string // owner; CreateSnapshot stamps the caller's team when ""
	// Key names where its files are kept (<data>/snapshots/<Key>/, the blob
	// store's snapshots/<Key>/), unique across teams: NewSnapshotKey's, or
	// the name for a snapshot made when names were unique across teams.
	// CreateSnapshot makes one when "".
	Key       string
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
// Names are unique per team: the methods that take a name take the team
// too, "" meaning the caller's own (the default team for the admin key and
// system work); a team's key naming another team is refused.
//
// Errors: CreateSnapshot gives a Conflict (code SNAPSHOT_EXISTS) for a name
// its team has taken; GetSnapshot, SetSnapshotExpiry and DeleteSnapshot
// give a NotFound (code SNAPSHOT_NOT_FOUND) for a missing one.
type SnapshotStore interface {
	CreateSnapshot(ctx context.Context, s *Snapshot) error
	GetSnapshot(ctx context.Context, team, name string) (*Snapshot, error)
	// ListSnapshots returns every snapshot, oldest first.
	ListSnapshots(ctx context.Context) ([]*Snapshot, error)
	// SetSnapshotExpiry sets ExpiresAt; the zero time means never.
	SetSnapshotExpiry(ctx context.Context, team, name string, expiresAt time.Time) error
	DeleteSnapshot(ctx context.Context, team, name string) error
}

// NewSnapshotKey returns a storage key for a new snapshot called name: '_',
// the name, '.' and a random suffix. No snapshot name starts with '_'
// (internal/sandbox/snapshot.go), so it never is an old snapshot's key (its
// name), and the suffix keeps teams' keys of one name apart; the table's
// UNIQUE constraint checks. Blob keys allow these characters
// (internal/blob/blob.go).
func NewSnapshotKey(name string) string {
	var b [8]byte
	rand.Read(b[:])
	return "_" + name + "." + hex.EncodeToString(b[:])
}
