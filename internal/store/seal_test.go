package store_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/secret"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// TestBucketKeysAreSealedAtRest: the raw rows of a sandbox and a snapshot
// with a bucket mount hold neither key; the store answers them opened; a
// daemon with another key cannot open them.
func TestBucketKeysAreSealedAtRest(t *testing.T) {
	dir := t.TempDir()
	sealer, err := secret.NewSealer(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "sbx.db")
	s, err := store.OpenSQLite(path, store.WithSealer(sealer))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := auth.System(context.Background(), "test")
	const access, secretKey = "AKIAEXAMPLEACCESS", "wJalrXUtnFEMI-very-secret"
	spec := store.Spec{Buckets: []wire.BucketMount{{Bucket: "data", Path: "/data", Endpoint: "https://s3.example", AccessKeyID: access, SecretAccessKey: secretKey}}}
	if err := s.CreateSandbox(ctx, &store.Sandbox{ID: "sbx-1", State: "created", Spec: spec}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSnapshot(ctx, &store.Snapshot{Name: "snap", SandboxID: "sbx-1", Spec: spec}); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rawSpec := func(q string) string {
		t.Helper()
		var raw string
		if err := db.QueryRow(q).Scan(&raw); err != nil {
			t.Fatal(err)
		}
		return raw
	}
	for _, q := range []string{"SELECT spec FROM sandboxes", "SELECT spec FROM snapshots"} {
		if raw := rawSpec(q); strings.Contains(raw, access) || strings.Contains(raw, secretKey) || !strings.Contains(raw, "sealedBucketKeys") {
			t.Fatalf("%s: the row holds a bucket key in the clear: %s", q, raw)
		}
	}
	sb, err := s.GetSandbox(ctx, "sbx-1")
	if err != nil {
		t.Fatal(err)
	}
	if b := sb.Spec.Buckets[0]; b.AccessKeyID != access || b.SecretAccessKey != secretKey || sb.Spec.SealedBucketKeys != nil {
		t.Fatalf("read back %+v", sb.Spec)
	}
	if snap, err := s.GetSnapshot(ctx, "", "snap"); err != nil || snap.Spec.Buckets[0].SecretAccessKey != secretKey {
		t.Fatalf("snapshot read back %+v, %v", snap, err)
	}
	// An update keeps them sealed.
	if err := s.UpdateSandbox(ctx, sb, nil); err != nil {
		t.Fatal(err)
	}
	if raw := rawSpec("SELECT spec FROM sandboxes"); strings.Contains(raw, secretKey) {
		t.Fatal("an update wrote the key in the clear")
	}
	s.Close()

	other, err := secret.NewSealer(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s2, err := store.OpenSQLite(path, store.WithSealer(other))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, err := s2.GetSandbox(ctx, "sbx-1"); err == nil {
		t.Fatal("another daemon's key opened the bucket keys")
	}
}
