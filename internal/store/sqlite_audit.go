package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// AuditStore keeps the audit log: one entry per mutating API request.
type AuditStore interface {
	// AppendAudit records entries (Seq is assigned).
	AppendAudit(ctx context.Context, entries []wire.AuditEntry) error
	// ListAudit returns up to limit entries with Seq > after, oldest first;
	// team "" lists every team's.
	ListAudit(ctx context.Context, team string, after int64, limit int) ([]wire.AuditEntry, error)
	// PruneAudit removes the entries recorded before before.
	PruneAudit(ctx context.Context, before time.Time) (int64, error)
}

var _ AuditStore = (*SQLite)(nil)

func (s *SQLite) AppendAudit(ctx context.Context, entries []wire.AuditEntry) error {
	if len(entries) == 0 {
		return nil
	}
	return s.withTx(ctx, func(tx *sql.Tx) error {
		// One statement for the batch: parsing it per row costs more than
		// the insert.
		stmt, err := tx.PrepareContext(ctx, "INSERT INTO audit (time, key_id, team, method, path, status, code, request_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
		if err != nil {
			return errdefs.Internal(err, "record audit entries")
		}
		defer stmt.Close()
		for _, e := range entries {
			t, err := encodeTime(e.Time)
			if err != nil {
				return err
			}
			if _, err := stmt.ExecContext(ctx, t, e.KeyID, e.Team, e.Method, e.Path, e.Status, e.Code, e.RequestID); err != nil {
				return errdefs.Internal(err, "record audit entry")
			}
		}
		return nil
	})
}

func (s *SQLite) ListAudit(ctx context.Context, team string, after int64, limit int) ([]wire.AuditEntry, error) {
	if limit <= 0 {
		limit = defaultEventLimit
	}
	q := "SELECT seq, time, key_id, team, method, path, status, code, request_id FROM audit WHERE seq > ?"
	args := []any{after}
	if team != "" {
		q += " AND team = ?"
		args = append(args, team)
	}
	rows, err := s.r.QueryContext(ctx, q+" ORDER BY seq LIMIT ?", append(args, limit)...)
	if err != nil {
		return nil, errdefs.Internal(err, "list audit log")
	}
	defer rows.Close()
	out := []wire.AuditEntry{}
	for rows.Next() {
		var e wire.AuditEntry
		var t sql.NullString
		if err := rows.Scan(&e.Seq, &t, &e.KeyID, &e.Team, &e.Method, &e.Path, &e.Status, &e.Code, &e.RequestID); err != nil {
			return nil, errdefs.Internal(err, "read audit entry")
		}
		if e.Time, err = decodeTime(t); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, errdefs.Internal(err, "list audit log")
	}
	return out, nil
}

func (s *SQLite) PruneAudit(ctx context.Context, before time.Time) (int64, error) {
	t, err := encodeTime(before)
	if err != nil {
		return 0, err
	}
	var n int64
	err = s.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM audit WHERE time < ?", t)
		if err != nil {
			return errdefs.Internal(err, "prune audit log")
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return n, err
}
