package store

import (
	"context"
	"database/sql"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// LatestSchemaVersion is the schema version this binary migrates a database to.
func LatestSchemaVersion() int { return len(migrations) }

// SchemaVersion reads the schema version of the database at path without
// changing it (read-only, no migration): sbx doctor uses it to tell a
// database written by a newer sbx before the daemon refuses it.
func SchemaVersion(ctx context.Context, path string) (int, error) {
	if path == "" || strings.ContainsRune(path, '?') {
		return 0, errdefs.Invalid(wire.CodeInvalidDBPath, "database path %q must be non-empty and must not contain '?'", path)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)&_pragma=query_only(1)")
	if err != nil {
		return 0, errdefs.Internal(err, "open database %s", path)
	}
	defer db.Close()
	var v int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, errdefs.Internal(err, "read the schema version of %s", path)
	}
	return v, nil
}
