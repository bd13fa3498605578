package store

import (
	"context"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/blob"
	"github.com/sbxhq/sbx/internal/errdefs"
)

// TestSnapshotNamesPerTeam: two teams each hold a snapshot called "same",
// under keys that differ; each sees, expires and deletes only its own, and a
// team's key naming the other team is refused.
func TestSnapshotNamesPerTeam(t *testing.T) {
	st := openTeamStore(t)
	sys := auth.System(context.Background(), "test")
	for _, team := range []string{"a", "b"} {
		if err := st.CreateTeam(sys, &Team{ID: team}); err != nil {
			t.Fatal(err)
		}
	}
	a, b := asTeam("a"), asTeam("b")
	sa, sb := &Snapshot{Name: "same", SandboxID: "sbx-a"}, &Snapshot{Name: "same", SandboxID: "sbx-b"}
	if err := st.CreateSnapshot(a, sa); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateSnapshot(b, sb); err != nil {
		t.Fatalf("b's snapshot of a name a uses: %v", err)
	}
	if sa.Key == sb.Key || sa.Key == "" || sa.Key == "same" {
		t.Fatalf("keys %q and %q: want distinct new keys", sa.Key, sb.Key)
	}
	// Memory images go to the blob store under the key (internal/sandbox/memoryblobs.go).
	if err := blob.CheckKey("snapshots/" + sa.Key + "/memory.tar.zst"); err != nil {
		t.Fatal(err)
	}
	for ctx, want := range map[context.Context]*Snapshot{a: sa, b: sb} {
		got, err := st.GetSnapshot(ctx, "", "same")
		if err != nil || got.SandboxID != want.SandboxID || got.Key != want.Key || got.Team != want.Team {
			t.Fatalf("%s's snapshot: %+v, %v", want.Team, got, err)
		}
		if list, err := st.ListSnapshots(ctx); err != nil || len(list) != 1 || list[0].Key != want.Key {
			t.Fatalf("%s's list: %v, %v", want.Team, list, err)
		}
	}
	// System work names the team of the row it acts on.
	if got, err := st.GetSnapshot(sys, "b", "same"); err != nil || got.Key != sb.Key {
		t.Fatalf("b's snapshot in the system scope: %+v, %v", got, err)
	}
	if _, err := st.GetSnapshot(a, "b", "same"); err == nil || strings.Contains(err.Error(), sb.Key) {
		t.Fatalf("a's key naming team b: %v", err)
	}
	if err := st.DeleteSnapshot(a, "", "same"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetSnapshot(a, "", "same"); !errdefs.Is(err, errdefs.KindNotFound) {
		t.Fatalf("a's deleted snapshot: %v", err)
	}
	if got, err := st.GetSnapshot(b, "", "same"); err != nil || got.SandboxID != "sbx-b" {
		t.Fatalf("b's snapshot after a deleted its own: %+v, %v", got, err)
	}
	if err := st.DeleteSnapshot(a, "", "same"); !errdefs.Is(err, errdefs.KindNotFound) {
		t.Fatalf("a deleting again: %v", err)
	}
}

// TestSnapshotsByTeamMigrationKeepsData opens a database written when
// snapshot names were unique across teams: every snapshot keeps its fields
// and team, and its name as its storage key (where its files already are);
// afterwards two teams hold snapshots of one name.
func TestSnapshotsByTeamMigrationKeepsData(t *testing.T) {
	s := migrateAcross(t, "CREATE TABLE snapshots_by_team",
		`INSERT INTO teams (id) VALUES ('a'), ('b')`,
		`INSERT INTO snapshots (name, sandbox_id, spec, memory, size_bytes, created_at, ttl_seconds, expires_at, team) VALUES
			('old', 'sbx-1', '{"image":"base"}', 1, 30, '2026-01-01T00:00:00.000000000Z', 60, '2026-01-02T00:00:00.000000000Z', 'a'),
			('plain', 'sbx-2', '{}', 0, 5, NULL, 0, NULL, 'default')`,
	)
	a, b := asTeam("a"), asTeam("b")
	snap, err := s.GetSnapshot(a, "", "old")
	if err != nil || snap.Key != "old" || snap.SandboxID != "sbx-1" || snap.Spec.Image != "base" || !snap.Memory || snap.SizeBytes != 30 || snap.TTLSeconds != 60 || snap.CreatedAt.IsZero() || snap.ExpiresAt.IsZero() || snap.Team != "a" {
		t.Fatalf("a's old snapshot after the migration: %+v, %v", snap, err)
	}
	if snap, err := s.GetSnapshot(auth.System(context.Background(), "test"), "default", "plain"); err != nil || snap.Key != "plain" || snap.SandboxID != "sbx-2" {
		t.Fatalf("default's snapshot after the migration: %+v, %v", snap, err)
	}
	nb := &Snapshot{Name: "old", SandboxID: "sbx-3"}
	if err := s.CreateSnapshot(b, nb); err != nil {
		t.Fatalf("b's own old: %v", err)
	}
	if nb.Key == "old" {
		t.Fatal("b's new snapshot took the key of a's old one")
	}
	if err := s.CreateSnapshot(a, &Snapshot{Name: "old"}); !errdefs.Is(err, errdefs.KindConflict) {
		t.Fatalf("a's second old: %v", err)
	}
	if u, err := s.Usage(auth.System(context.Background(), "test"), "a"); err != nil || u.Snapshots != 1 {
		t.Fatalf("a's usage: %+v, %v", u, err)
	}
}
