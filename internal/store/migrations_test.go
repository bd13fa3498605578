package store

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/auth"
)

func userVersion(t *testing.T, s *SQLite) int {
	t.Helper()
	var v int
	if err := s.r.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// withMigrations runs the test with extra steps appended, as a newer binary
// would have them.
func withMigrations(t *testing.T, extra ...string) {
	old := migrations
	migrations = append(append([]string(nil), old...), extra...)
	t.Cleanup(func() { migrations = old })
}

// TestUpgradeKeepsData opens a database made by "this" binary with a binary
// that knows one more step, then with one whose new step fails.
func TestUpgradeKeepsData(t *testing.T) {
	ctx := auth.System(context.Background(), "test")
	path := filepath.Join(t.TempDir(), "sbx.db")
	s, err := OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	base := userVersion(t, s)
	if base != len(migrations) {
		t.Fatalf("fresh database at version %d, want %d", base, len(migrations))
	}
	if err := s.CreateSandbox(ctx, &Sandbox{ID: "sbx-1", Name: "web", State: "created"}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	withMigrations(t, "ALTER TABLE sandboxes ADD COLUMN note TEXT NOT NULL DEFAULT ''")
	s, err = OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	if v := userVersion(t, s); v != base+1 {
		t.Errorf("version %d after upgrade, want %d", v, base+1)
	}
	if _, err := s.GetSandbox(ctx, "web"); err != nil {
		t.Errorf("sandbox lost in upgrade: %v", err)
	}
	s.Close()

	// A step that fails part-way leaves the database at the last whole
	// version: its first statement is rolled back with it.
	withMigrations(t, "CREATE TABLE half (x); SELECT no_such_function()")
	if _, err := OpenSQLite(path); err == nil {
		t.Fatal("open with a failing migration succeeded")
	}
	migrations = migrations[:base+1]
	s, err = OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v := userVersion(t, s); v != base+1 {
		t.Errorf("version %d after a failed step, want %d", v, base+1)
	}
	var n int
	if err := s.r.QueryRow("SELECT count(*) FROM sqlite_master WHERE name = 'half'").Scan(&n); err != nil || n != 0 {
		t.Errorf("failed step left table half behind (count %d, %v)", n, err)
	}
	if _, err := s.GetSandbox(ctx, "web"); err != nil {
		t.Errorf("sandbox lost after a failed step: %v", err)
	}
}

// migrateAcross opens a store at the schema just before the migration
// whose text holds marker, writes rows there, then opens it again with
// every migration and returns it: a migration's test of the data it keeps.
func migrateAcross(t *testing.T, marker string, rows ...string) *SQLite {
	t.Helper()
	step := -1
	for i, m := range migrations {
		if strings.Contains(m, marker) {
			step = i
		}
	}
	if step < 0 {
		t.Fatalf("no migration holds %q", marker)
	}
	path := filepath.Join(t.TempDir(), "sbx.db")
	all := migrations
	migrations = all[:step]
	s, err := OpenSQLite(path)
	migrations = all
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range rows {
		if _, err := s.w.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close()
	if s, err = OpenSQLite(path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
