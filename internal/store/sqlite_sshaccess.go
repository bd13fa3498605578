package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

var _ SSHAccessStore = (*SQLite)(nil)

const sshAccessColumns = "id, sandbox_id, COALESCE(token_hash, ''), public_key, team, created_by, scopes, created_at, expires_at"

// CreateSSHAccess records a. It sets a.CreatedAt to now if zero.
func (s *SQLite) CreateSSHAccess(ctx context.Context, a *SSHAccess) error {
	if a == nil || a.ID == "" || a.SandboxID == "" || (a.TokenHash == "") == (a.PublicKey == "") {
		return errdefs.Invalid(wire.CodeInvalidID, "SSH access needs an id, a sandbox id and either a token hash or a public key")
	}
	if a.CreatedAt.IsZero() {
		a.CreatedAt = now()
	}
	times, err := encodeTimes(a.CreatedAt, a.ExpiresAt)
	if err != nil {
		return err
	}
	return s.withTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO ssh_access ("+
			"id, sandbox_id, token_hash, public_key, team, created_by, scopes, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
			a.ID, a.SandboxID, nullIfEmpty(a.TokenHash), a.PublicKey, a.Team, a.CreatedBy, strings.Join(a.Scopes, ","), times[0], times[1])
		switch {
		case isForeignKeyViolation(err):
			return sandboxMissing(a.SandboxID)
		case err != nil:
			return errdefs.Internal(err, "write SSH access of %s", a.SandboxID)
		}
		return nil
	})
}

// SSHAccessByTokenHash finds the token record with this hash.
func (s *SQLite) SSHAccessByTokenHash(ctx context.Context, hash string) (*SSHAccess, error) {
	row := s.r.QueryRowContext(ctx, "SELECT "+sshAccessColumns+" FROM ssh_access WHERE token_hash = ?", hash)
	a, err := scanSSHAccess(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errdefs.NotFound(wire.CodeSSHAccessNotFound, "no such SSH access token")
	}
	return a, err
}

// ListSSHAccess returns the SSH access records of a sandbox, oldest first.
func (s *SQLite) ListSSHAccess(ctx context.Context, sandboxID string) ([]SSHAccess, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+sshAccessColumns+" FROM ssh_access WHERE sandbox_id = ? ORDER BY created_at, id", sandboxID)
	if err != nil {
		return nil, errdefs.Internal(err, "list SSH access of %s", sandboxID)
	}
	defer rows.Close()
	var out []SSHAccess
	for rows.Next() {
		a, err := scanSSHAccess(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *a)
	}
	if err := rows.Err(); err != nil {
		return nil, errdefs.Internal(err, "list SSH access of %s", sandboxID)
	}
	return out, nil
}

// DeleteSSHAccess removes one record of a sandbox.
func (s *SQLite) DeleteSSHAccess(ctx context.Context, sandboxID, id string) error {
	return s.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM ssh_access WHERE sandbox_id = ? AND id = ?", sandboxID, id)
		if err != nil {
			return errdefs.Internal(err, "delete SSH access %s", id)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return errdefs.NotFound(wire.CodeSSHAccessNotFound, "sandbox %s has no SSH access %q", sandboxID, id)
		}
		return nil
	})
}

// DeleteExpiredSSHAccess removes the records that expired before t.
func (s *SQLite) DeleteExpiredSSHAccess(ctx context.Context, t time.Time) (int64, error) {
	at, err := encodeTime(t)
	if err != nil {
		return 0, err
	}
	var n int64
	err = s.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM ssh_access WHERE expires_at IS NOT NULL AND expires_at < ?", at)
		if err != nil {
			return errdefs.Internal(err, "delete expired SSH access")
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return n, err
}

func scanSSHAccess(row scanner) (*SSHAccess, error) {
	var a SSHAccess
	var created, expires sql.NullString
	var scopes string
	if err := row.Scan(&a.ID, &a.SandboxID, &a.TokenHash, &a.PublicKey, &a.Team, &a.CreatedBy, &scopes, &created, &expires); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		return nil, errdefs.Internal(err, "read SSH access")
	}
	if scopes != "" {
		a.Scopes = strings.Split(scopes, ",")
	}
	var err error
	if a.CreatedAt, err = decodeTime(created); err != nil {
		return nil, err
	}
	if a.ExpiresAt, err = decodeTime(expires); err != nil {
		return nil, err
	}
	return &a, nil
}
