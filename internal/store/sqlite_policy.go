package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// SetDeadline sets the activity time and deadline of sandbox id while it is
// in state, and reports whether it was.
func (s *SQLite) SetDeadline(ctx context.Context, id string, state wire.State, lastActivity, expiresAt time.Time, action string) (bool, error) {
	team, args, err := teamClause(ctx, "team")
	if err != nil {
		return false, err
	}
	times, err := encodeTimes(lastActivity, expiresAt)
	if err != nil {
		return false, err
	}
	var n int64
	err = s.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			"UPDATE sandboxes SET last_activity_at = ?, expires_at = ?, expires_action = ? WHERE id = ? AND state = ?"+team,
			append([]any{times[0], times[1], action, id, state}, args...)...)
		if err != nil {
			return errdefs.Internal(err, "set deadline of sandbox %s", id)
		}
		n, err = res.RowsAffected()
		if err != nil {
			return errdefs.Internal(err, "set deadline of sandbox %s", id)
		}
		return nil
	})
	return n > 0, err
}

// ListExpiring returns up to limit sandboxes with a deadline, soonest first.
// The stored times sort as text (see timeLayout), so the index serves it.
func (s *SQLite) ListExpiring(ctx context.Context, limit int) ([]*Sandbox, error) {
	team, args, err := teamClause(ctx, "team")
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.r.QueryContext(ctx,
		"SELECT "+sandboxColumns+" FROM sandboxes WHERE expires_at IS NOT NULL"+team+" ORDER BY expires_at, id LIMIT ?", append(args, limit)...)
	if err != nil {
		return nil, errdefs.Internal(err, "list deadlines")
	}
	defer rows.Close()
	out := []*Sandbox{}
	for rows.Next() {
		sb, err := s.scanSandbox(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, sb)
	}
	if err := rows.Err(); err != nil {
		return nil, errdefs.Internal(err, "list deadlines")
	}
	return out, nil
}

// AppendEvent appends ev on its own.
func (s *SQLite) AppendEvent(ctx context.Context, ev *Event) error {
	if _, _, err := teamOf(ctx); err != nil {
		return err
	}
	if ev == nil || ev.SandboxID == "" {
		return errdefs.Invalid(wire.CodeInvalidEvent, "an event needs a sandbox id")
	}
	e := *ev
	if e.Time.IsZero() {
		e.Time = now()
	}
	evTime, err := encodeTime(e.Time)
	if err != nil {
		return err
	}
	err = s.withTx(ctx, func(tx *sql.Tx) error {
		e.Seq, err = insertEvent(ctx, tx, &e, evTime)
		return err
	})
	if err != nil {
		return err
	}
	*ev = e
	return nil
}

// insertEvent inserts e and returns its sequence number.
func insertEvent(ctx context.Context, tx *sql.Tx, e *Event, evTime any) (int64, error) {
	res, err := tx.ExecContext(ctx,
		`INSERT INTO events (sandbox_id, sandbox_name, time, state, reason, message, team)
			VALUES (?, ?, ?, ?, ?, ?, COALESCE(NULLIF(?, ''), (SELECT team FROM sandboxes WHERE id = ?), 'default'))`,
		e.SandboxID, e.SandboxName, evTime, e.State, e.Reason, e.Message, e.Team, e.SandboxID)
	if err != nil {
		return 0, errdefs.Internal(err, "record event of sandbox %s", e.SandboxID)
	}
	seq, err := res.LastInsertId()
	if err != nil {
		return 0, errdefs.Internal(err, "record event of sandbox %s", e.SandboxID)
	}
	return seq, nil
}

// PruneEvents removes old events of deleted sandboxes.
func (s *SQLite) PruneEvents(ctx context.Context, before time.Time) (int64, error) {
	team, args, err := teamClause(ctx, "team")
	if err != nil {
		return 0, err
	}
	t, err := encodeTime(before)
	if err != nil {
		return 0, err
	}
	var n int64
	err = s.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			"DELETE FROM events WHERE time < ? AND sandbox_id NOT IN (SELECT id FROM sandboxes)"+team, append([]any{t}, args...)...)
		if err != nil {
			return errdefs.Internal(err, "prune events")
		}
		n, err = res.RowsAffected()
		if err != nil {
			return errdefs.Internal(err, "prune events")
		}
		return nil
	})
	return n, err
}
