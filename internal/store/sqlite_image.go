package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/sdk"
)

const imageColumns = "name, id, layers, config, source, size_bytes, created_at, team"

func imageNotFound(name string) error {
	return errdefs.NotFound(sdk.CodeImageNotFound, "image %q not found; list images with \"sbx image ls\"", name)
}

// PutImage inserts or replaces the image with img.Name. It sets
// img.CreatedAt to now if zero.
func (s *SQLite) PutImage(ctx context.Context, img *Image) error {
	if _, _, err := teamOf(ctx); err != nil {
		return err
	}
	if img == nil || img.Name == "" {
		return errdefs.Invalid(sdk.CodeInvalidImage, "an image record needs a name")
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
	err = s.withTx(ctx, func(tx *sql.Tx) error {
		// Image names are unique across teams (an image is addressed by
		// name when a sandbox is created); only the owner replaces one.
		res, err := tx.ExecContext(ctx,
			`INSERT INTO images (`+imageColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET id = excluded.id, layers = excluded.layers,
				config = excluded.config, source = excluded.source,
				size_bytes = excluded.size_bytes, created_at = excluded.created_at
			WHERE images.team = excluded.team`,
			img.Name, img.ID, layers, config, img.Source, img.SizeBytes, at, team)
		if err != nil {
			return errdefs.Internal(err, "write image %s", img.Name)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return errdefs.Conflict(sdk.CodeNameTaken, "the image name %q is taken by another team; pick another name", img.Name)
		}
		return nil
	})
	if err != nil {
		return err
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

// GetImage returns the image called name.
func (s *SQLite) GetImage(ctx context.Context, name string) (*Image, error) {
	team, args, err := imageTeams(ctx)
	if err != nil {
		return nil, err
	}
	row := s.r.QueryRowContext(ctx, "SELECT "+imageColumns+" FROM images WHERE name = ?"+team, append([]any{name}, args...)...)
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
	rows, err := s.r.QueryContext(ctx, "SELECT "+imageColumns+" FROM images WHERE 1"+team+" ORDER BY name", args...)
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

// DeleteImage removes the image called name. Missing gives a NotFound error.
func (s *SQLite) DeleteImage(ctx context.Context, name string) error {
	team, args, err := teamClause(ctx, "team")
	if err != nil {
		return err
	}
	return s.execOne(ctx, "delete image "+name, imageNotFound(name), "DELETE FROM images WHERE name = ?"+team, append([]any{name}, args...)...)
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
