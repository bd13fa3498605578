package store

import (
	"context"
	"testing"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/wire"
)

// TestTeamsMigrationKeepsData opens a database written before teams with
// this binary: every sandbox, event and snapshot lands in team "default"
// with its name, and the rows that reference sandboxes (leases, ports)
// survive the change to per-team names.
func TestTeamsMigrationKeepsData(t *testing.T) {
	ctx := auth.System(context.Background(), "test")
	s := migrateAcross(t, "CREATE TABLE teams",
		`INSERT INTO sandboxes (id, name, state, spec) VALUES ('sbx-1', 'web', 'stopped', '{"cpu":1}'), ('sbx-2', NULL, 'stopped', '{}')`,
		`INSERT INTO events (sandbox_id, sandbox_name, state) VALUES ('sbx-1', 'web', 'stopped')`,
		`INSERT INTO leases (sandbox_id, ip) VALUES ('sbx-1', '10.0.0.2')`,
		`INSERT INTO ports (sandbox_id, port, token) VALUES ('sbx-1', 8080, 't')`,
		`INSERT INTO snapshots (name, spec) VALUES ('snap', '{}')`,
	)
	def := auth.WithPrincipal(ctx, auth.Principal{KeyID: "k", Team: auth.DefaultTeam})
	sb, err := s.GetSandbox(def, "web")
	if err != nil || sb.ID != "sbx-1" || sb.Team != auth.DefaultTeam {
		t.Fatalf("after the migration: %+v, %v", sb, err)
	}
	if l, err := s.ListSandboxes(def, Filter{}); err != nil || len(l) != 2 {
		t.Fatalf("default team lists %d, %v", len(l), err)
	}
	if evs, err := s.ListEvents(def, "sbx-1", 0, 0); err != nil || len(evs) != 1 || evs[0].Team != auth.DefaultTeam {
		t.Fatalf("events %+v, %v", evs, err)
	}
	if snap, err := s.GetSnapshot(def, "", "snap"); err != nil || snap.Team != auth.DefaultTeam {
		t.Fatalf("snapshot %+v, %v", snap, err)
	}
	var leases, ports int
	s.r.QueryRow("SELECT (SELECT count(*) FROM leases), (SELECT count(*) FROM ports)").Scan(&leases, &ports)
	if leases != 1 || ports != 1 {
		t.Fatalf("%d leases and %d ports survived, want 1 and 1", leases, ports)
	}
	if err := s.CreateSandbox(def, &Sandbox{ID: "sbx-3", Name: "web", State: wire.StateStopped}); err == nil {
		t.Fatal("a second web in team default")
	}
	if u, err := s.Usage(ctx, auth.DefaultTeam); err != nil || u.Sandboxes != 2 || u.CPU != 1 || u.Snapshots != 1 {
		t.Fatalf("usage %+v, %v", u, err)
	}
}
