package store

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/wire"
)

// GetSandbox runs through cached statements (stmtcache.go): each call sees
// the current row, and the scoped and unscoped forms of the query stay
// apart, so a team never finds another team's sandbox.
func TestGetSandboxCachedStatements(t *testing.T) {
	s, err := OpenSQLite(filepath.Join(t.TempDir(), "sbx.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	admin := auth.System(context.Background(), "test")
	red := auth.WithPrincipal(admin, auth.Principal{KeyID: "k-red", Team: "red"})
	blue := auth.WithPrincipal(admin, auth.Principal{KeyID: "k-blue", Team: "blue"})
	for _, team := range []string{"red", "blue"} {
		if err := s.CreateTeam(admin, &Team{ID: team}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateSandbox(red, &Sandbox{ID: "sbx-r", Name: "box", State: wire.StateStarted}); err != nil {
		t.Fatal(err)
	}
	for range 3 { // prepared on the first call, reused after
		if sb, err := s.GetSandbox(red, "box"); err != nil || sb.ID != "sbx-r" {
			t.Fatalf("red's own: %+v, %v", sb, err)
		}
		if _, err := s.GetSandbox(blue, "box"); err == nil {
			t.Fatal("blue finds red's sandbox")
		}
		if sb, err := s.GetSandbox(admin, "sbx-r"); err != nil || sb.Name != "box" {
			t.Fatalf("unscoped: %+v, %v", sb, err)
		}
	}
	if err := s.DeleteSandbox(admin, "sbx-r"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetSandbox(red, "box"); err == nil {
		t.Error("a deleted sandbox is still found")
	}
}

func BenchmarkGetSandbox(b *testing.B) {
	s, err := OpenSQLite(filepath.Join(b.TempDir(), "sbx.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := auth.System(context.Background(), "test")
	if err := s.CreateSandbox(ctx, &Sandbox{ID: "sbx-b", Name: "bench", State: wire.StateStarted}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := s.GetSandbox(ctx, "bench"); err != nil {
			b.Fatal(err)
		}
	}
}
