package store

import (
	"context"
	"github.com/sbxhq/sbx/internal/auth"
	"path/filepath"
	"testing"
)

// TestEventsMigrationKeepsHistory upgrades a database from before step 3
// (events with a foreign key) and checks that events, their order and the
// sequence survive, and that deleted sandboxes' events may now be appended.
func TestEventsMigrationKeepsHistory(t *testing.T) {
	ctx := auth.System(context.Background(), "test")
	path := filepath.Join(t.TempDir(), "sbx.db")
	all := migrations
	t.Cleanup(func() { migrations = all })
	migrations = all[:2]
	s, err := OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"sbx-1", "sbx-2"} {
		if _, err := s.w.Exec("INSERT INTO sandboxes (id, name, state, spec) VALUES (?, ?, 'started', '{}')", id, id+"-name"); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"sbx-1", "sbx-2", "sbx-1", "sbx-2"} {
		if _, err := s.w.Exec("INSERT INTO events (sandbox_id, state) VALUES (?, 'started')", id); err != nil {
			t.Fatal(err)
		}
	}
	// The highest seq belongs to a deleted row: the sequence must not reuse it.
	if _, err := s.w.Exec("DELETE FROM events WHERE seq = 4"); err != nil {
		t.Fatal(err)
	}
	s.Close()

	migrations = all
	s, err = OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, err := s.ListEvents(ctx, "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 || evs[0].Seq != 1 || evs[2].Seq != 3 || evs[0].SandboxName != "sbx-1-name" {
		t.Fatalf("events after migration = %+v", evs)
	}
	if err := s.DeleteSandbox(ctx, "sbx-1"); err != nil {
		t.Fatal(err)
	}
	ev := &Event{SandboxID: "sbx-1", State: "deleted"}
	if err := s.AppendEvent(ctx, ev); err != nil {
		t.Fatal(err)
	}
	if ev.Seq != 5 {
		t.Errorf("seq after migration = %d, want 5 (4 was used before)", ev.Seq)
	}
}
