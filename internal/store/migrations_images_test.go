package store

import (
	"context"
	"testing"
)

// TestImagesByTeamMigrationKeepsData opens a database written when image
// names were unique across teams: every image keeps its team and fields,
// and afterwards two teams hold images of one name.
func TestImagesByTeamMigrationKeepsData(t *testing.T) {
	s := migrateAcross(t, "CREATE TABLE images_by_team",
		`INSERT INTO teams (id) VALUES ('a'), ('b')`,
		`INSERT INTO images (name, id, layers, config, source, size_bytes, created_at, team) VALUES
			('base', 'sha256:1', '["sha256:l1"]', '{}', 'import', 10, '2026-01-01T00:00:00.000000000Z', 'default'),
			('app', 'sha256:2', '["sha256:l1","sha256:l2"]', '{"workingDir":"/app"}', 'build', 20, NULL, 'a')`,
	)
	a, b := asTeam("a"), asTeam("b")
	if img, err := s.GetImage(a, "app"); err != nil || img.ID != "sha256:2" || len(img.Layers) != 2 || img.Config.WorkingDir != "/app" || img.Source != "build" || img.SizeBytes != 20 || img.Team != "a" {
		t.Fatalf("a's app after the migration: %+v, %v", img, err)
	}
	if img, err := s.GetImage(b, "base"); err != nil || img.ID != "sha256:1" || img.Team != "default" || img.CreatedAt.IsZero() {
		t.Fatalf("default's base after the migration: %+v, %v", img, err)
	}
	if err := s.PutImage(b, &Image{Name: "app", ID: "sha256:3"}); err != nil {
		t.Fatalf("b's own app: %v", err)
	}
	for ctx, want := range map[context.Context]string{a: "sha256:2", b: "sha256:3"} {
		if img, err := s.GetImage(ctx, "app"); err != nil || img.ID != want {
			t.Errorf("app: %+v, %v, want %s", img, err, want)
		}
	}
}
