package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

var _ SnapshotStore = (*SQLite)(nil)

const snapshotColumns = "name, sandbox_id, spec, memory, size_bytes, created_at, ttl_seconds, expires_at, team, storage_key"

func snapshotNotFound(name string) error {
	return errdefs.NotFound(wire.CodeSnapshotNotFound, "snapshot %q not found; list snapshots with \"sbx snapshot ls\"", name)
}

// CreateSnapshot inserts s. It sets s.CreatedAt to now if zero.
func (s *SQLite) CreateSnapshot(ctx context.Context, snap *Snapshot) error {
	if _, _, err := teamOf(ctx); err != nil {
		return err
	}
	if snap == nil || snap.Name == "" {
		return errdefs.Invalid(wire.CodeInvalidSnapshot, "a snapshot record needs a name")
	}
	created := snap.CreatedAt
	if created.IsZero() {
		created = now()
	}
	spec, err := s.encodeSpec("snapshot:"+snap.Name, snap.Spec)
	if err != nil {
		return err
	}
	times, err := encodeTimes(created, snap.ExpiresAt)
	if err != nil {
		return err
	}
	team, err := teamFor(ctx, snap.Team)
	if err != nil {
		return err
	}
	key := snap.Key
	if key == "" {
		key = NewSnapshotKey(snap.Name)
	}
	err = s.withTx(ctx, func(tx *sql.Tx) error {
		if err := s.checkSnapshotQuota(ctx, tx, team); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx,
			"INSERT INTO snapshots ("+snapshotColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			snap.Name, snap.SandboxID, spec, snap.Memory, snap.SizeBytes, times[0], snap.TTLSeconds, times[1], team, key)
		switch {
		case err == nil:
			return nil
		case isPrimaryKeyViolation(err) || isUniqueViolation(err):
			// Only (team, name) can be taken: a key is the name's own or random.
			return errdefs.Conflict(wire.CodeSnapshotExists, "a snapshot named %q already exists; pick another name or delete it first", snap.Name)
		}
		return errdefs.Internal(err, "write snapshot %s", snap.Name)
	})
	if err != nil {
		return err
	}
	snap.CreatedAt, snap.Team, snap.Key = created, team, key
	return nil
}

// GetSnapshot returns team's snapshot called name ("": the caller's team).
func (s *SQLite) GetSnapshot(ctx context.Context, team, name string) (*Snapshot, error) {
	team, err := teamFor(ctx, team)
	if err != nil {
		return nil, err
	}
	row := s.r.QueryRowContext(ctx, "SELECT "+snapshotColumns+" FROM snapshots WHERE name = ? AND team = ?", name, team)
	snap, err := s.scanSnapshot(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, snapshotNotFound(name)
	}
	return snap, err
}

// ListSnapshots returns every snapshot, oldest first.
func (s *SQLite) ListSnapshots(ctx context.Context) ([]*Snapshot, error) {
	team, args, err := teamClause(ctx, "team")
	if err != nil {
		return nil, err
	}
	return queryAll(ctx, s.r, "list snapshots", s.scanSnapshot, "SELECT "+snapshotColumns+" FROM snapshots WHERE 1"+team+" ORDER BY created_at, name", args...)
}

// SetSnapshotExpiry sets the expiry of team's snapshot name ("": the
// caller's team); the zero time means never.
func (s *SQLite) SetSnapshotExpiry(ctx context.Context, team, name string, expiresAt time.Time) error {
	at, err := encodeTime(expiresAt)
	if err != nil {
		return err
	}
	team, err = teamFor(ctx, team)
	if err != nil {
		return err
	}
	return s.changeSnapshot(ctx, name, "UPDATE snapshots SET expires_at = ? WHERE name = ? AND team = ?", at, name, team)
}

// DeleteSnapshot removes team's snapshot called name ("": the caller's
// team), never another team's of the same name.
func (s *SQLite) DeleteSnapshot(ctx context.Context, team, name string) error {
	team, err := teamFor(ctx, team)
	if err != nil {
		return err
	}
	return s.changeSnapshot(ctx, name, "DELETE FROM snapshots WHERE name = ? AND team = ?", name, team)
}

// changeSnapshot runs one statement that must touch the snapshot name.
func (s *SQLite) changeSnapshot(ctx context.Context, name, query string, args ...any) error {
	return s.execOne(ctx, "write snapshot "+name, snapshotNotFound(name), query, args...)
}

func (s *SQLite) scanSnapshot(sc scanner) (*Snapshot, error) {
	var snap Snapshot
	var spec string
	var created, expires sql.NullString
	err := sc.Scan(&snap.Name, &snap.SandboxID, &spec, &snap.Memory, &snap.SizeBytes, &created, &snap.TTLSeconds, &expires, &snap.Team, &snap.Key)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	if err != nil {
		return nil, errdefs.Internal(err, "read snapshot")
	}
	if err := s.decodeSpec("snapshot:"+snap.Name, spec, &snap.Spec); err != nil {
		return nil, err
	}
	if snap.CreatedAt, err = decodeTime(created); err != nil {
		return nil, err
	}
	if snap.ExpiresAt, err = decodeTime(expires); err != nil {
		return nil, err
	}
	return &snap, nil
}
