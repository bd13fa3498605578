package store

import (
	"context"
	"github.com/sbxhq/sbx/internal/auth"
	"os"
	"path/filepath"
	"testing"
)

// TestSchemaVersionReadsWithoutChanging reads a current and a too-new
// database's version, and leaves a missing file missing.
func TestSchemaVersionReadsWithoutChanging(t *testing.T) {
	ctx := auth.System(context.Background(), "test")
	path := filepath.Join(t.TempDir(), "sbx.db")
	s, err := OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := SchemaVersion(ctx, path); err != nil || v != LatestSchemaVersion() {
		t.Fatalf("SchemaVersion = %d, %v; want %d", v, err, LatestSchemaVersion())
	}
	if _, err := s.w.Exec("PRAGMA user_version = 999"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if v, err := SchemaVersion(ctx, path); err != nil || v != 999 {
		t.Fatalf("SchemaVersion = %d, %v; want 999", v, err)
	}

	missing := filepath.Join(t.TempDir(), "none.db")
	if _, err := SchemaVersion(ctx, missing); err == nil {
		t.Error("SchemaVersion of a missing file succeeded")
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("SchemaVersion created %s (stat: %v)", missing, err)
	}
}
