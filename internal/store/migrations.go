package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
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
	// 2: network address leases and exposed ports (preview tokens).
	`CREATE TABLE leases (
		sandbox_id TEXT PRIMARY KEY REFERENCES sandboxes (id) ON DELETE CASCADE,
		ip         TEXT NOT NULL UNIQUE,
		created_at TEXT
	);
	CREATE TABLE ports (
		sandbox_id TEXT NOT NULL REFERENCES sandboxes (id) ON DELETE CASCADE,
		port       INTEGER NOT NULL,
		public     INTEGER NOT NULL DEFAULT 0,
		token      TEXT NOT NULL,
		created_at TEXT,
		PRIMARY KEY (sandbox_id, port)
	);`,
	// 3: lifecycle deadlines as columns (the scheduler asks for the soonest),
	// and events without the foreign key, so the "deleted" event of a
	// sandbox outlives its record in the global stream. SQLite cannot drop
	// a constraint: copy the table, keeping every row and the sequence.
	`ALTER TABLE sandboxes ADD COLUMN last_activity_at TEXT;
	ALTER TABLE sandboxes ADD COLUMN expires_at TEXT;
	ALTER TABLE sandboxes ADD COLUMN expires_action TEXT NOT NULL DEFAULT '';
	CREATE INDEX sandboxes_expires ON sandboxes (expires_at) WHERE expires_at IS NOT NULL;

	CREATE TABLE events_new (
		seq          INTEGER PRIMARY KEY AUTOINCREMENT,
		sandbox_id   TEXT NOT NULL,
		sandbox_name TEXT NOT NULL DEFAULT '',
		time         TEXT,
		state        TEXT NOT NULL,
		reason       TEXT NOT NULL DEFAULT '',
		message      TEXT NOT NULL DEFAULT ''
	);
	INSERT INTO events_new (seq, sandbox_id, sandbox_name, time, state, reason, message)
		SELECT e.seq, e.sandbox_id, COALESCE(s.name, ''), e.time, e.state, e.reason, e.message
		FROM events e LEFT JOIN sandboxes s ON s.id = e.sandbox_id;
	DELETE FROM sqlite_sequence WHERE name = 'events_new';
	UPDATE sqlite_sequence SET name = 'events_new' WHERE name = 'events';
	DROP TABLE events;
	ALTER TABLE events_new RENAME TO events;
	CREATE INDEX events_sandbox ON events (sandbox_id, seq);`,
	// 4: snapshots: a sandbox's filesystem as a layer, optionally with a
	// gVisor memory image (see SnapshotStore).
	`CREATE TABLE snapshots (
		name       TEXT PRIMARY KEY,
		sandbox_id TEXT NOT NULL DEFAULT '', -- the source; it may be gone
		spec       TEXT NOT NULL,            -- JSON of Spec
		memory     INTEGER NOT NULL DEFAULT 0,
		size_bytes INTEGER NOT NULL DEFAULT 0,
		created_at TEXT,
		ttl_seconds INTEGER NOT NULL DEFAULT 0,
		expires_at TEXT
	);
	CREATE INDEX snapshots_created ON snapshots (created_at, name);`,
	// 5: teams, API keys and the audit log. Every sandbox, event, snapshot
	// and image belongs to a team; what existed goes to team "default".
	// Sandbox names become unique per team: the old column's UNIQUE
	// constraint cannot be dropped without rebuilding the table, which
	// would cascade-delete the rows that reference it (leases, ports), so
	// the old column is renamed and emptied and a new one takes its place.
	`CREATE TABLE teams (
		id         TEXT PRIMARY KEY,
		quotas     TEXT NOT NULL DEFAULT '{}', -- JSON of Quotas
		created_at TEXT
	);
	INSERT INTO teams (id, created_at) VALUES ('default', strftime('%Y-%m-%dT%H:%M:%S.000000000Z', 'now'));
	CREATE TABLE api_keys (
		id            TEXT PRIMARY KEY,
		name          TEXT NOT NULL DEFAULT '',
		team          TEXT NOT NULL,
		scopes        TEXT NOT NULL,  -- JSON array
		secret_sha256 BLOB NOT NULL,  -- never the secret itself
		created_at    TEXT,
		expires_at    TEXT,
		revoked_at    TEXT,
		last_used_at  TEXT
	);
	CREATE TABLE audit (
		seq        INTEGER PRIMARY KEY AUTOINCREMENT,
		time       TEXT NOT NULL,
		key_id     TEXT NOT NULL DEFAULT '',
		team       TEXT NOT NULL DEFAULT '',
		method     TEXT NOT NULL,
		path       TEXT NOT NULL,
		status     INTEGER NOT NULL,
		code       TEXT NOT NULL DEFAULT '',
		request_id TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX audit_time ON audit (time);
	CREATE INDEX audit_team ON audit (team, seq);

	ALTER TABLE sandboxes RENAME COLUMN name TO name_before_teams;
	ALTER TABLE sandboxes ADD COLUMN name TEXT;
	ALTER TABLE sandboxes ADD COLUMN team TEXT NOT NULL DEFAULT 'default';
	UPDATE sandboxes SET name = name_before_teams, name_before_teams = NULL;
	CREATE UNIQUE INDEX sandboxes_team_name ON sandboxes (team, name);
	CREATE INDEX sandboxes_name ON sandboxes (name);
	ALTER TABLE events ADD COLUMN team TEXT NOT NULL DEFAULT 'default';
	CREATE INDEX events_team ON events (team, seq);
	ALTER TABLE snapshots ADD COLUMN team TEXT NOT NULL DEFAULT 'default';
	ALTER TABLE images ADD COLUMN team TEXT NOT NULL DEFAULT 'default';
	CREATE TABLE team_webhooks (
		team   TEXT PRIMARY KEY,
		url    TEXT NOT NULL,
		secret TEXT NOT NULL DEFAULT '' -- HMAC key: kept, as it signs every delivery
	);`,
	// 6: SSH access to a sandbox (see SSHAccessStore): a token (its sha256
	// only) or a public key, the team, key and scopes that made it, an expiry.
	`CREATE TABLE ssh_access (
		id          TEXT PRIMARY KEY,
		sandbox_id  TEXT NOT NULL REFERENCES sandboxes (id) ON DELETE CASCADE,
		token_hash  TEXT UNIQUE,           -- hex sha256 of the token; NULL for a key
		public_key  TEXT NOT NULL DEFAULT '', -- authorized_keys form; '' for a token
		team        TEXT NOT NULL DEFAULT '',
		created_by  TEXT NOT NULL DEFAULT '',
		scopes      TEXT NOT NULL DEFAULT '', -- of created_by, comma-separated
		created_at  TEXT,
		expires_at  TEXT
	);
	CREATE INDEX ssh_access_sandbox ON ssh_access (sandbox_id);`,
	// 7: secrets of the HTTP egress proxy (see SecretStore): per team, the
	// value sealed with AES-GCM by package secret (the key is not here).
	`CREATE TABLE secrets (
		team       TEXT NOT NULL,
		name       TEXT NOT NULL,
		sealed     BLOB NOT NULL,
		size       INTEGER NOT NULL,
		created_at TEXT,
		PRIMARY KEY (team, name)
	);`,
	// 8: warm pools (internal/sandbox/pool.go): a pool's template and size,
	// and on sandboxes the pool an instance waits in (NULL: a user's sandbox).
	`CREATE TABLE pools (
		team       TEXT NOT NULL,
		name       TEXT NOT NULL,
		template   TEXT NOT NULL, -- JSON of sdk.CreatePoolRequest
		created_at TEXT,
		updated_at TEXT,
		PRIMARY KEY (team, name)
	);
	ALTER TABLE sandboxes ADD COLUMN pool TEXT;
	CREATE INDEX sandboxes_pool ON sandboxes (pool);`,
	// 9: the API key that exposed a port: its preview token dies with the
	// key (internal/api/ports.go). '' for ports exposed before.
	`ALTER TABLE ports ADD COLUMN created_by TEXT NOT NULL DEFAULT '';`,
	// 10: where a secret may be sent (package secret): a JSON list of host
	// patterns and whether plain HTTP is allowed. A secret from before has
	// none, so the proxy injects it nowhere until its hosts are set.
	`ALTER TABLE secrets ADD COLUMN hosts TEXT NOT NULL DEFAULT '[]';
	ALTER TABLE secrets ADD COLUMN allow_http INTEGER NOT NULL DEFAULT 0;`,
	// 11: image names are unique per team, not across teams (two teams'
	// builds of one name no longer collide, nor does a name tell that
	// another team's image exists). No table references images, so it is
	// copied into one keyed by (team, name).
	`CREATE TABLE images_by_team (
		name       TEXT NOT NULL,
		id         TEXT NOT NULL,
		layers     TEXT NOT NULL, -- JSON array of digests
		config     TEXT NOT NULL, -- JSON of ImageConfig
		source     TEXT NOT NULL DEFAULT '',
		size_bytes INTEGER NOT NULL DEFAULT 0,
		created_at TEXT,
		team       TEXT NOT NULL DEFAULT 'default',
		PRIMARY KEY (team, name)
	);
	INSERT INTO images_by_team (name, id, layers, config, source, size_bytes, created_at, team)
		SELECT name, id, layers, config, source, size_bytes, created_at, team FROM images;
	DROP TABLE images;
	ALTER TABLE images_by_team RENAME TO images;
	CREATE INDEX images_name ON images (name);`,
	// 12: snapshot names are unique per team, like image names (11). Each
	// snapshot records the key its files are kept under (<data>/snapshots/
	// and the blob store's snapshots/): its name for the snapshots from
	// before, which keep their files; a key no other team's can take for
	// new ones (NewSnapshotKey). No table references snapshots.
	`CREATE TABLE snapshots_by_team (
		name        TEXT NOT NULL,
		sandbox_id  TEXT NOT NULL DEFAULT '',
		spec        TEXT NOT NULL,
		memory      INTEGER NOT NULL DEFAULT 0,
		size_bytes  INTEGER NOT NULL DEFAULT 0,
		created_at  TEXT,
		ttl_seconds INTEGER NOT NULL DEFAULT 0,
		expires_at  TEXT,
		team        TEXT NOT NULL DEFAULT 'default',
		storage_key TEXT NOT NULL UNIQUE,
		PRIMARY KEY (team, name)
	);
	INSERT INTO snapshots_by_team (name, sandbox_id, spec, memory, size_bytes, created_at, ttl_seconds, expires_at, team, storage_key)
		SELECT name, sandbox_id, spec, memory, size_bytes, created_at, ttl_seconds, expires_at, team, name FROM snapshots;
	DROP TABLE snapshots;
	ALTER TABLE snapshots_by_team RENAME TO snapshots;
	CREATE INDEX snapshots_created ON snapshots (created_at, name);`,
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
		return false, errdefs.Conflict(wire.CodeSchemaTooNew,
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
