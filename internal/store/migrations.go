package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/sbxhq/sbx/internal/errdefs"
)

// migrations are the schema steps, oldest first. The schema version of a
// database (PRAGMA user_version) is the number of steps applied to it.
//
// Rules: never edit or reorder a step that has shipped; append a new one.
// A step must keep existing data (ALTER TABLE, copy-and-rename), never drop it.
var migrations = []string{
	// 1: the first schema.
	`CREATE TABLE sandboxes (
		id         TEXT PRIMARY KEY,
		name       TEXT UNIQUE, -- NULL when unnamed
		state      TEXT NOT NULL,
		reason     TEXT NOT NULL DEFAULT '',
		error      TEXT NOT NULL DEFAULT '',
		spec       TEXT NOT NULL, -- JSON of Spec
		created_at TEXT,          -- times: see timeLayout; NULL is zero
		updated_at TEXT,
		started_at TEXT,
		stopped_at TEXT
	);
	CREATE INDEX sandboxes_created ON sandboxes (created_at, id);
	CREATE INDEX sandboxes_state ON sandboxes (state);

	CREATE TABLE events (
		seq        INTEGER PRIMARY KEY AUTOINCREMENT,
		sandbox_id TEXT NOT NULL REFERENCES sandboxes (id) ON DELETE CASCADE,
		time       TEXT,
		state      TEXT NOT NULL,
		reason     TEXT NOT NULL DEFAULT '',
		message    TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX events_sandbox ON events (sandbox_id, seq);

	CREATE TABLE images (
		name       TEXT PRIMARY KEY,
		id         TEXT NOT NULL,
		layers     TEXT NOT NULL, -- JSON array of digests
		config     TEXT NOT NULL, -- JSON of ImageConfig
		source     TEXT NOT NULL DEFAULT '',
		size_bytes INTEGER NOT NULL DEFAULT 0,
		created_at TEXT
	);`,
}

// migrate brings db up to the newest schema version, one step per transaction, so a
// crash mid-way leaves the database at a whole version. db must be the
// write connection, whose transactions take the write lock at BEGIN: two
// processes opening the same file at once then migrate one after the other.
func migrate(ctx context.Context, db *sql.DB) error {
	for {
		done, err := migrateStep(ctx, db)
		if err != nil || done {
			return err
		}
	}
}

// migrateStep applies the next step, if any, and reports whether the
// database is already current.
func migrateStep(ctx context.Context, db *sql.DB) (done bool, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, errdefs.Internal(err, "begin migration")
	}
	defer tx.Rollback()

	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return false, errdefs.Internal(err, "read schema version")
	}
	switch {
	case v > len(migrations):
		return false, errdefs.Conflict("SCHEMA_TOO_NEW",
			"the database has schema version %d but this sbx knows only up to %d; it was written by a newer sbx, so upgrade sbx (the database was not changed)",
			v, len(migrations))
	case v == len(migrations):
		return true, nil
	}
	if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
		return false, errdefs.Internal(err, "migrate schema to version %d", v+1)
	}
	// PRAGMA takes no parameters; v is an int we computed.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1)); err != nil {
		return false, errdefs.Internal(err, "set schema version %d", v+1)
	}
	if err := tx.Commit(); err != nil {
		return false, errdefs.Internal(err, "commit schema version %d", v+1)
	}
	return false, nil
}
