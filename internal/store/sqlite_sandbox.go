package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

const sandboxColumns = "id, name, state, reason, error, spec, created_at, updated_at, started_at, stopped_at, last_activity_at, expires_at, expires_action, team, pool"

// defaultEventLimit is how many events ListEvents returns when limit <= 0.
const defaultEventLimit = 1000

// CreateSandbox inserts sb. It sets sb.UpdatedAt, and sb.CreatedAt if zero.
// A taken id gives a Conflict with code ID_TAKEN, a taken name NAME_TAKEN.
func (s *SQLite) CreateSandbox(ctx context.Context, sb *Sandbox) error {
	if _, _, err := teamOf(ctx); err != nil {
		return err
	}
	if sb == nil || sb.ID == "" {
		return errdefs.Invalid(wire.CodeInvalidSandbox, "a sandbox record needs an id")
	}
	// A new sandbox writes to the data dir: none below the disk reserve.
	if err := s.disk.Check("create a sandbox"); err != nil {
		return err
	}
	t := now()
	created := sb.CreatedAt
	if created.IsZero() {
		created = t
	}
	spec, err := s.encodeSpec(sb.ID, sb.Spec)
	if err != nil {
		return err
	}
	times, err := encodeTimes(created, t, sb.StartedAt, sb.StoppedAt, sb.LastActivityAt, sb.ExpiresAt)
	if err != nil {
		return err
	}
	team, err := teamFor(ctx, sb.Team)
	if err != nil {
		return err
	}
	err = s.withTx(ctx, func(tx *sql.Tx) error {
		// In the same transaction as the insert, and every write goes
		// through one connection: concurrent creates cannot both pass.
		if err := s.checkSandboxQuota(ctx, tx, team, sb.Spec); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx,
			"INSERT INTO sandboxes ("+sandboxColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			sb.ID, nullIfEmpty(sb.Name), sb.State, sb.Reason, sb.Error, spec, times[0], times[1], times[2], times[3],
			times[4], times[5], sb.ExpiresAction, team, nullIfEmpty(sb.Pool))
		return sandboxWriteError(err, sb)
	})
	if err != nil {
		return err
	}
	sb.CreatedAt, sb.UpdatedAt, sb.Team = created, t, team
	return nil
}

// sandboxWriteError turns a failed insert or update of sb into the error
// its caller can act on.
func sandboxWriteError(err error, sb *Sandbox) error {
	switch {
	case err == nil:
		return nil
	case isPrimaryKeyViolation(err):
		return errdefs.Conflict(wire.CodeIDTaken, "a sandbox with id %q already exists", sb.ID)
	case isUniqueViolation(err): // (team, name) is the only other unique index
		return errdefs.Conflict(wire.CodeNameTaken,
			"a sandbox named %q already exists; pick another name or use PUT /v1/sandboxes/{name} to get it", sb.Name)
	}
	return errdefs.Internal(err, "write sandbox %s", sb.ID)
}

// GetSandbox finds a sandbox by id or, failing that, by name.
func (s *SQLite) GetSandbox(ctx context.Context, idOrName string) (*Sandbox, error) {
	// One query, so the answer comes from one snapshot; an id match wins.
	// Seeing every team (the bootstrap admin, system work), a name several
	// teams use finds the caller's own team's sandbox first.
	team, args, err := teamClause(ctx, "team")
	if err != nil {
		return nil, err
	}
	own := auth.TeamOf(ctx)
	if _, request := auth.FromContext(ctx); request {
		team += " AND pool IS NULL" // a warm pool's instance is nobody's sandbox yet
	}
	row := s.rs.queryRow(ctx, s.r,
		"SELECT "+sandboxColumns+" FROM sandboxes WHERE (id = ? OR name = ?)"+team+" ORDER BY id = ? DESC, team = ? DESC LIMIT 1",
		append(append([]any{idOrName, idOrName}, args...), idOrName, own)...)
	sb, err := s.scanSandbox(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errdefs.NotFound(wire.CodeSandboxNotFound, "sandbox %q not found", idOrName)
	}
	return sb, err
}

// ListSandboxes returns the sandboxes matching f, oldest first.
func (s *SQLite) ListSandboxes(ctx context.Context, f Filter) ([]*Sandbox, error) {
	team, args, err := teamClause(ctx, "team")
	if err != nil {
		return nil, err
	}
	q := "SELECT " + sandboxColumns + " FROM sandboxes WHERE 1" + team
	if f.State != "" {
		q += " AND state = ?"
		args = append(args, f.State)
	}
	if f.UserSandboxes {
		q += " AND pool IS NULL"
	}
	rows, err := s.r.QueryContext(ctx, q+" ORDER BY created_at, id", args...)
	if err != nil {
		return nil, errdefs.Internal(err, "list sandboxes")
	}
	defer rows.Close()
	out := []*Sandbox{}
	for rows.Next() {
		sb, err := s.scanSandbox(rows)
		if err != nil {
			return nil, err
		}
		// Labels live inside the spec JSON; few enough sandboxes live on one
		// host that filtering here is cheaper than indexing them.
		if hasLabels(sb.Spec.Labels, f.Labels) {
			out = append(out, sb)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, errdefs.Internal(err, "list sandboxes")
	}
	return out, nil
}

func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// UpdateSandbox replaces the record with sb.ID and, if ev is not nil,
// appends ev in the same transaction. On success it sets sb.UpdatedAt to
// now, ev.Seq, ev.SandboxID to sb.ID if empty and ev.Time to now if zero;
// on failure it changes neither.
func (s *SQLite) UpdateSandbox(ctx context.Context, sb *Sandbox, ev *Event) error {
	team, teamArgs, err := teamClause(ctx, "team")
	if err != nil {
		return err
	}
	if sb == nil || sb.ID == "" {
		return errdefs.Invalid(wire.CodeInvalidSandbox, "a sandbox record needs an id")
	}
	t := now()
	spec, err := s.encodeSpec(sb.ID, sb.Spec)
	if err != nil {
		return err
	}
	times, err := encodeTimes(sb.CreatedAt, t, sb.StartedAt, sb.StoppedAt, sb.LastActivityAt, sb.ExpiresAt)
	if err != nil {
		return err
	}
	var e Event
	var evTime any
	if ev != nil {
		e = *ev
		if e.SandboxID == "" {
			e.SandboxID = sb.ID
		}
		if e.SandboxName == "" {
			e.SandboxName = sb.Name
		}
		if e.Team == "" {
			e.Team = sb.Team
		}
		if e.Time.IsZero() {
			e.Time = t
		}
		if evTime, err = encodeTime(e.Time); err != nil {
			return err
		}
	}
	err = s.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`UPDATE sandboxes SET name = ?, state = ?, reason = ?, error = ?, spec = ?,
				created_at = ?, updated_at = ?, started_at = ?, stopped_at = ?,
				last_activity_at = ?, expires_at = ?, expires_action = ?, pool = ?
			WHERE id = ?`+team,
			append([]any{nullIfEmpty(sb.Name), sb.State, sb.Reason, sb.Error, spec,
				times[0], times[1], times[2], times[3], times[4], times[5], sb.ExpiresAction, nullIfEmpty(sb.Pool), sb.ID}, teamArgs...)...)
		if err != nil {
			return sandboxWriteError(err, sb)
		}
		if n, err := res.RowsAffected(); err != nil {
			return errdefs.Internal(err, "update sandbox %s", sb.ID)
		} else if n == 0 {
			return errdefs.NotFound(wire.CodeSandboxNotFound, "sandbox %q not found", sb.ID)
		}
		if ev == nil {
			return nil
		}
		// Checked inside the transaction, as the foreign key once was: a
		// refused event undoes the update it came with.
		if e.SandboxID != sb.ID {
			return errdefs.Invalid(wire.CodeInvalidEvent, "event of sandbox %s recorded with sandbox %s", e.SandboxID, sb.ID)
		}
		e.Seq, err = insertEvent(ctx, tx, &e, evTime)
		return err
	})
	if err != nil {
		return err
	}
	sb.UpdatedAt = t
	if ev != nil {
		*ev = e
	}
	return nil
}

// DeleteSandbox removes the record and its events. Missing is not an error.
func (s *SQLite) DeleteSandbox(ctx context.Context, id string) error {
	team, args, err := teamClause(ctx, "team")
	if err != nil {
		return err
	}
	args = append([]any{id}, args...)
	return s.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "DELETE FROM events WHERE sandbox_id = ?"+team, args...); err != nil {
			return errdefs.Internal(err, "delete events of sandbox %s", id)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM sandboxes WHERE id = ?"+team, args...); err != nil {
			return errdefs.Internal(err, "delete sandbox %s", id)
		}
		return nil
	})
}

// ListEvents returns up to limit events with Seq > after, in Seq order, of
// one sandbox or, if sandboxID is empty, of all. limit <= 0 means 1000.
func (s *SQLite) ListEvents(ctx context.Context, sandboxID string, after int64, limit int) ([]Event, error) {
	if limit <= 0 {
		limit = defaultEventLimit
	}
	team, teamArgs, err := teamClause(ctx, "team")
	if err != nil {
		return nil, err
	}
	q := "SELECT seq, sandbox_id, sandbox_name, team, time, state, reason, message FROM events WHERE seq > ?" + team
	args := append([]any{after}, teamArgs...)
	if sandboxID != "" {
		q += " AND sandbox_id = ?"
		args = append(args, sandboxID)
	}
	rows, err := s.r.QueryContext(ctx, q+" ORDER BY seq LIMIT ?", append(args, limit)...)
	if err != nil {
		return nil, errdefs.Internal(err, "list events")
	}
	defer rows.Close()
	out := []Event{}
	for rows.Next() {
		var e Event
		var t sql.NullString
		if err := rows.Scan(&e.Seq, &e.SandboxID, &e.SandboxName, &e.Team, &t, &e.State, &e.Reason, &e.Message); err != nil {
			return nil, errdefs.Internal(err, "read event")
		}
		if e.Time, err = decodeTime(t); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, errdefs.Internal(err, "list events")
	}
	return out, nil
}

func (s *SQLite) scanSandbox(sc scanner) (*Sandbox, error) {
	var sb Sandbox
	var name, pool sql.NullString
	var spec string
	var created, updated, started, stopped, active, expires sql.NullString
	err := sc.Scan(&sb.ID, &name, &sb.State, &sb.Reason, &sb.Error, &spec, &created, &updated, &started, &stopped,
		&active, &expires, &sb.ExpiresAction, &sb.Team, &pool)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	if err != nil {
		return nil, errdefs.Internal(err, "read sandbox")
	}
	sb.Name, sb.Pool = name.String, pool.String
	if err := s.decodeSpec(sb.ID, spec, &sb.Spec); err != nil {
		return nil, err
	}
	dst := []*time.Time{&sb.CreatedAt, &sb.UpdatedAt, &sb.StartedAt, &sb.StoppedAt, &sb.LastActivityAt, &sb.ExpiresAt}
	for i, src := range []sql.NullString{created, updated, started, stopped, active, expires} {
		if *dst[i], err = decodeTime(src); err != nil {
			return nil, err
		}
	}
	return &sb, nil
}
