package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

const imageColumns = "name, id, layers, config, source, size_bytes, created_at, team"

func imageNotFound(name string) error {
	return errdefs.NotFound(wire.CodeImageNotFound, "image %q not found; list images with \"sbx image ls\"", name)
}

// PutImage inserts or replaces the image with img.Name. It sets
// img.CreatedAt to now if zero.
func (s *SQLite) PutImage(ctx context.Context, img *Image) error {
	if _, _, err := teamOf(ctx); err != nil {
		return err
	}
	if img == nil || img.Name == "" {
		return errdefs.Invalid(wire.CodeInvalidImage, "an image record needs a name")
	}
	created := img.CreatedAt
	if created.IsZero() {
		created = now()
	}
	layers, err := encodeJSON(img.Layers)
	if err != nil {
		return err
	}
	config, err := encodeJSON(img.Config)
	if err != nil {
		return err
	}
	at, err := encodeTime(created)
	if err != nil {
		return err
	}
	team, err := teamFor(ctx, img.Team)
	if err != nil {
		return err
	}
	// Image names are unique per team; a team's own image of a name
	// shadows team default's for it (GetImage).
	_, err = s.w.ExecContext(ctx,
		`INSERT INTO images (`+imageColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (team, name) DO UPDATE SET id = excluded.id, layers = excluded.layers,
			config = excluded.config, source = excluded.source,
			size_bytes = excluded.size_bytes, created_at = excluded.created_at`,
		img.Name, img.ID, layers, config, img.Source, img.SizeBytes, at, team)
	if err != nil {
		return errdefs.Internal(err, "write image %s", img.Name)
	}
	img.CreatedAt, img.Team = created, team
	return nil
}

// imageTeams restricts an image query to what ctx's team sees: its own
// images and team default's.
func imageTeams(ctx context.Context) (string, []any, error) {
	t, ok, err := teamOf(ctx)
	if ok {
		return " AND team IN (?, ?)", []any{t, auth.DefaultTeam}, nil
	}
	return "", nil, err
}

// GetImage returns the image called name: the caller's team's own, else
// team default's.
func (s *SQLite) GetImage(ctx context.Context, name string) (*Image, error) {
	team, args, err := imageTeams(ctx)
	if err != nil {
		return nil, err
	}
	args = append(append([]any{name}, args...), auth.TeamOf(ctx))
	row := s.r.QueryRowContext(ctx, "SELECT "+imageColumns+" FROM images WHERE name = ?"+team+" ORDER BY team = ? DESC, team = 'default' DESC LIMIT 1", args...)
	img, err := scanImage(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, imageNotFound(name)
	}
	return img, err
}

// ListImages returns every image, by name.
func (s *SQLite) ListImages(ctx context.Context) ([]*Image, error) {
	team, args, err := imageTeams(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, "SELECT "+imageColumns+" FROM images WHERE 1"+team+" ORDER BY name, team", args...)
	if err != nil {
		return nil, errdefs.Internal(err, "list images")
	}
	defer rows.Close()
	out := []*Image{}
	for rows.Next() {
		img, err := scanImage(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, img)
	}
	if err := rows.Err(); err != nil {
		return nil, errdefs.Internal(err, "list images")
	}
	return out, nil
}

// DeleteImage removes the caller's team's image called name (never
// another team's of the same name). Missing gives a NotFound error.
func (s *SQLite) DeleteImage(ctx context.Context, name string) error {
	team, err := teamFor(ctx, "")
	if err != nil {
		return err
	}
	return s.execOne(ctx, "delete image "+name, imageNotFound(name), "DELETE FROM images WHERE name = ? AND team = ?", name, team)
}

func scanImage(sc scanner) (*Image, error) {
	var img Image
	var layers, config string
	var created sql.NullString
	err := sc.Scan(&img.Name, &img.ID, &layers, &config, &img.Source, &img.SizeBytes, &created, &img.Team)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	if err != nil {
		return nil, errdefs.Internal(err, "read image")
	}
	if err := decodeJSON(layers, &img.Layers); err != nil {
		return nil, err
	}
	if err := decodeJSON(config, &img.Config); err != nil {
		return nil, err
	}
	if img.CreatedAt, err = decodeTime(created); err != nil {
		return nil, err
	}
	return &img, nil
}
