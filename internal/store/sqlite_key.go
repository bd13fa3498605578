package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Key is the stored record of an API key. The secret itself is never
// stored, only its SHA-256 (see internal/auth/keys.go for why SHA-256).
type Key struct {
	ID           string
	Name         string
	Team         string
	Scopes       []string
	SecretSHA256 []byte
	CreatedAt    time.Time
	ExpiresAt    time.Time // zero: never
	RevokedAt    time.Time // zero: not revoked
	LastUsedAt   time.Time // zero: never used (written at most once a minute)
}

// KeyStore persists API keys. Not scoped by the caller's team: the key
// service (internal/auth) decides who sees which keys.
type KeyStore interface {
	CreateKey(ctx context.Context, k *Key) error
	// ListKeys returns every key, revoked ones included, oldest first.
	ListKeys(ctx context.Context) ([]*Key, error)
	// RevokeKey marks a key revoked at t; a missing key gives KEY_NOT_FOUND.
	RevokeKey(ctx context.Context, id string, t time.Time) error
	// SetKeysUsed records when keys were last used.
	SetKeysUsed(ctx context.Context, used map[string]time.Time) error
}

var _ KeyStore = (*SQLite)(nil)

const keyColumns = "id, name, team, scopes, secret_sha256, created_at, expires_at, revoked_at, last_used_at"

func (s *SQLite) CreateKey(ctx context.Context, k *Key) error {
	scopes, err := encodeJSON(k.Scopes)
	if err != nil {
		return err
	}
	times, err := encodeTimes(k.CreatedAt, k.ExpiresAt, k.RevokedAt, k.LastUsedAt)
	if err != nil {
		return err
	}
	return s.withTx(ctx, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, "SELECT 1 FROM teams WHERE id = ?", k.Team).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return errdefs.NotFound(wire.CodeTeamNotFound, "team %q not found; create it first (sbx team create)", k.Team)
		}
		if err != nil {
			return errdefs.Internal(err, "find team %s", k.Team)
		}
		_, err = tx.ExecContext(ctx, "INSERT INTO api_keys ("+keyColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
			k.ID, k.Name, k.Team, scopes, k.SecretSHA256, times[0], times[1], times[2], times[3])
		if err != nil {
			return errdefs.Internal(err, "create key %s", k.ID)
		}
		return nil
	})
}

func (s *SQLite) ListKeys(ctx context.Context) ([]*Key, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+keyColumns+" FROM api_keys ORDER BY created_at, id")
	if err != nil {
		return nil, errdefs.Internal(err, "list keys")
	}
	defer rows.Close()
	out := []*Key{}
	for rows.Next() {
		var k Key
		var scopes string
		var t [4]sql.NullString
		if err := rows.Scan(&k.ID, &k.Name, &k.Team, &scopes, &k.SecretSHA256, &t[0], &t[1], &t[2], &t[3]); err != nil {
			return nil, errdefs.Internal(err, "read key")
		}
		if err := decodeJSON(scopes, &k.Scopes); err != nil {
			return nil, err
		}
		for i, dst := range []*time.Time{&k.CreatedAt, &k.ExpiresAt, &k.RevokedAt, &k.LastUsedAt} {
			if *dst, err = decodeTime(t[i]); err != nil {
				return nil, err
			}
		}
		out = append(out, &k)
	}
	if err := rows.Err(); err != nil {
		return nil, errdefs.Internal(err, "list keys")
	}
	return out, nil
}

func (s *SQLite) RevokeKey(ctx context.Context, id string, t time.Time) error {
	at, err := encodeTime(t)
	if err != nil {
		return err
	}
	return s.execOne(ctx, "revoke key "+id, errdefs.NotFound(wire.CodeKeyNotFound, "key %q not found", id),
		"UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?", at, id)
}

func (s *SQLite) SetKeysUsed(ctx context.Context, used map[string]time.Time) error {
	if len(used) == 0 {
		return nil
	}
	return s.withTx(ctx, func(tx *sql.Tx) error {
		for id, t := range used {
			at, err := encodeTime(t)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, "UPDATE api_keys SET last_used_at = ? WHERE id = ?", at, id); err != nil {
				return errdefs.Internal(err, "record use of key %s", id)
			}
		}
		return nil
	})
}
