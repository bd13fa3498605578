package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// PoolRecord is a stored warm pool: its team, name, template and size
// (internal/sandbox/pool.go). Its instances are sandbox records whose
// Pool is the pool's name.
type PoolRecord struct {
	Team      string
	Name      string
	Spec      wire.CreatePoolRequest // Name repeated; Min, Max the size
	CreatedAt time.Time
	UpdatedAt time.Time
}

const poolColumns = "team, name, template, created_at, updated_at"

// PoolNotFound is the error for a missing pool, from the store or the
// daemon's pools.
func PoolNotFound(name string) error {
	return errdefs.NotFound(wire.CodePoolNotFound, "pool %q not found; list pools with \"sbx pool ls\"", name)
}

// PutPool inserts p, or replaces the pool of the same team and name when
// replace is set. A taken name without replace is a POOL_EXISTS conflict.
func (s *SQLite) PutPool(ctx context.Context, p *PoolRecord, replace bool) error {
	t := now()
	if p.CreatedAt.IsZero() {
		p.CreatedAt = t
	}
	spec, err := encodeJSON(p.Spec)
	if err != nil {
		return err
	}
	times, err := encodeTimes(p.CreatedAt, t)
	if err != nil {
		return err
	}
	if p.Team, err = teamFor(ctx, p.Team); err != nil {
		return err
	}
	verb := "INSERT"
	if replace {
		verb = "INSERT OR REPLACE"
	}
	err = s.withTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, verb+" INTO pools ("+poolColumns+") VALUES (?, ?, ?, ?, ?)", p.Team, p.Name, spec, times[0], times[1])
		return err
	})
	switch {
	case err == nil:
		p.UpdatedAt = t
		return nil
	case isPrimaryKeyViolation(err) || isUniqueViolation(err):
		return errdefs.Conflict(wire.CodePoolExists, "a pool named %q already exists; resize it with \"sbx pool update\" or delete it first", p.Name)
	}
	return errdefs.Internal(err, "write pool %s", p.Name)
}

// GetPool returns the pool called name of ctx's team (of any team, oldest
// first, for the system scope).
func (s *SQLite) GetPool(ctx context.Context, team, name string) (*PoolRecord, error) {
	team, err := teamFor(ctx, team)
	if err != nil {
		return nil, err
	}
	row := s.r.QueryRowContext(ctx, "SELECT "+poolColumns+" FROM pools WHERE team = ? AND name = ?", team, name)
	p, err := scanPool(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, PoolNotFound(name)
	}
	return p, err
}

// ListPools returns every pool of ctx's team (of every team for an
// system scope), by team and name.
func (s *SQLite) ListPools(ctx context.Context) ([]*PoolRecord, error) {
	team, args, err := teamClause(ctx, "team")
	if err != nil {
		return nil, err
	}
	return queryAll(ctx, s.r, "list pools", scanPool, "SELECT "+poolColumns+" FROM pools WHERE 1"+team+" ORDER BY team, name", args...)
}

// DeletePool removes the pool record; its instances are the caller's to delete.
func (s *SQLite) DeletePool(ctx context.Context, team, name string) error {
	team, err := teamFor(ctx, team)
	if err != nil {
		return err
	}
	return s.execOne(ctx, "delete pool "+name, PoolNotFound(name), "DELETE FROM pools WHERE team = ? AND name = ?", team, name)
}

func scanPool(sc scanner) (*PoolRecord, error) {
	var p PoolRecord
	var spec string
	var created, updated sql.NullString
	err := sc.Scan(&p.Team, &p.Name, &spec, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	if err != nil {
		return nil, errdefs.Internal(err, "read pool")
	}
	if err := decodeJSON(spec, &p.Spec); err != nil {
		return nil, err
	}
	if p.CreatedAt, err = decodeTime(created); err != nil {
		return nil, err
	}
	if p.UpdatedAt, err = decodeTime(updated); err != nil {
		return nil, err
	}
	return &p, nil
}
