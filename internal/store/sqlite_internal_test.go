package store

import (
	"database/sql"
	"path/filepath"
	"testing"
)

// TestConnectionPragmas checks the per-connection settings the durability
// and concurrency promises rest on; they cannot be seen from another
// connection.
func TestConnectionPragmas(t *testing.T) {
	s, err := OpenSQLite(filepath.Join(t.TempDir(), "sbx.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		name   string
		pool   *sql.DB
		pragma string
		want   int
	}{
		{"writer", s.w, "synchronous", 2}, // FULL
		{"writer", s.w, "foreign_keys", 1},
		{"writer", s.w, "busy_timeout", 5000},
		{"reader", s.r, "busy_timeout", 5000},
		{"reader", s.r, "query_only", 1},
	} {
		var got int
		if err := c.pool.QueryRow("PRAGMA " + c.pragma).Scan(&got); err != nil {
			t.Fatalf("%s: PRAGMA %s: %v", c.name, c.pragma, err)
		}
		if got != c.want {
			t.Errorf("%s: PRAGMA %s = %d, want %d", c.name, c.pragma, got, c.want)
		}
	}
}
