package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Team is the stored record of a team (wire.Team).
type Team struct {
	ID        string
	Quotas    wire.Quotas
	CreatedAt time.Time
}

// TeamStore persists teams and their quotas. Teams are admin objects: these
// methods are not scoped by the caller's team (the API lets only admin keys
// reach them, or a key read its own team).
type TeamStore interface {
	// CreateTeam inserts t; a taken id gives a Conflict (TEAM_EXISTS).
	CreateTeam(ctx context.Context, t *Team) error
	GetTeam(ctx context.Context, id string) (*Team, error)
	ListTeams(ctx context.Context) ([]*Team, error)
	// SetQuotas replaces a team's quotas.
	SetQuotas(ctx context.Context, id string, q wire.Quotas) error
	// DeleteTeam removes an empty team: one that still owns sandboxes,
	// snapshots or keys gives a Conflict (TEAM_NOT_EMPTY).
	DeleteTeam(ctx context.Context, id string) error
	// Usage sums what a team holds now.
	Usage(ctx context.Context, id string) (wire.TeamUsage, error)

	// SetTeamWebhook sets the URL a team's events are also sent to.
	SetTeamWebhook(ctx context.Context, h TeamWebhook) error
	// DeleteTeamWebhook removes it; none gives WEBHOOK_NOT_FOUND.
	DeleteTeamWebhook(ctx context.Context, team string) error
	ListTeamWebhooks(ctx context.Context) ([]TeamWebhook, error)
}

// TeamWebhook is where a team's events go, signed with Secret.
type TeamWebhook struct {
	Team, URL, Secret string
}

var _ TeamStore = (*SQLite)(nil)

func (s *SQLite) CreateTeam(ctx context.Context, t *Team) error {
	q, err := encodeJSON(t.Quotas)
	if err != nil {
		return err
	}
	t.CreatedAt = now()
	created, _ := encodeTime(t.CreatedAt)
	return s.withTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO teams (id, quotas, created_at) VALUES (?, ?, ?)", t.ID, q, created)
		if isPrimaryKeyViolation(err) {
			return errdefs.Conflict(wire.CodeTeamExists, "team %q already exists", t.ID)
		}
		if err != nil {
			return errdefs.Internal(err, "create team %s", t.ID)
		}
		return nil
	})
}

func (s *SQLite) GetTeam(ctx context.Context, id string) (*Team, error) {
	t, err := scanTeam(s.r.QueryRowContext(ctx, "SELECT id, quotas, created_at FROM teams WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errdefs.NotFound(wire.CodeTeamNotFound, "team %q not found", id)
	}
	return t, err
}

func (s *SQLite) ListTeams(ctx context.Context) ([]*Team, error) {
	return queryAll(ctx, s.r, "list teams", scanTeam, "SELECT id, quotas, created_at FROM teams ORDER BY id")
}

func (s *SQLite) SetQuotas(ctx context.Context, id string, q wire.Quotas) error {
	b, err := encodeJSON(q)
	if err != nil {
		return err
	}
	return s.execOne(ctx, "set quotas of team "+id, errdefs.NotFound(wire.CodeTeamNotFound, "team %q not found", id),
		"UPDATE teams SET quotas = ? WHERE id = ?", b, id)
}

func (s *SQLite) DeleteTeam(ctx context.Context, id string) error {
	return s.withTx(ctx, func(tx *sql.Tx) error {
		var n int
		if _, err := tx.ExecContext(ctx, "DELETE FROM team_webhooks WHERE team = ?", id); err != nil {
			return errdefs.Internal(err, "delete the webhook of team %s", id)
		}
		err := tx.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM sandboxes WHERE team = ?)
			+ (SELECT COUNT(*) FROM snapshots WHERE team = ?)
			+ (SELECT COUNT(*) FROM api_keys WHERE team = ? AND revoked_at IS NULL)`, id, id, id).Scan(&n)
		if err != nil {
			return errdefs.Internal(err, "count what team %s owns", id)
		}
		if n > 0 {
			return errdefs.Conflict(wire.CodeTeamNotEmpty, "team %q still owns %d sandboxes, snapshots or keys; delete or revoke them first", id, n)
		}
		res, err := tx.ExecContext(ctx, "DELETE FROM teams WHERE id = ?", id)
		if err != nil {
			return errdefs.Internal(err, "delete team %s", id)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return errdefs.NotFound(wire.CodeTeamNotFound, "team %q not found", id)
		}
		return nil
	})
}

func (s *SQLite) Usage(ctx context.Context, id string) (wire.TeamUsage, error) {
	t, err := s.GetTeam(ctx, id)
	if err != nil {
		return wire.TeamUsage{}, err
	}
	u, err := s.usage(ctx, s.r, id)
	u.Quotas = t.Quotas
	return u, err
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// SetDiskOutside makes every disk quota count what f says team holds on
// disk outside the store (its volumes' sizes, its backups' stored bytes).
func (s *SQLite) SetDiskOutside(f func(team string) (int, error)) { s.diskOutside = f }

// usage sums a team's sandboxes and snapshots, and on disk what it holds
// outside the store too. A sandbox counts as running while it has (or is
// getting, or is leaving) an instance.
func (s *SQLite) usage(ctx context.Context, q querier, team string) (wire.TeamUsage, error) {
	u := wire.TeamUsage{Team: team}
	err := q.QueryRowContext(ctx, `SELECT COUNT(*),
			COALESCE(SUM(state IN ('creating', 'starting', 'started', 'stopping', 'pausing', 'paused', 'resuming')), 0),
			COALESCE(SUM(json_extract(spec, '$.cpu')), 0),
			COALESCE(SUM(json_extract(spec, '$.memoryMiB')), 0),
			COALESCE(SUM(json_extract(spec, '$.diskMiB')), 0),
			(SELECT COUNT(*) FROM snapshots WHERE team = ?)
		FROM sandboxes WHERE team = ?`, team, team).
		Scan(&u.Sandboxes, &u.Running, &u.CPU, &u.MemoryMiB, &u.DiskMiB, &u.Snapshots)
	if err != nil {
		return u, errdefs.Internal(err, "sum the usage of team %s", team)
	}
	if s.diskOutside != nil {
		more, err := s.diskOutside(team)
		if err != nil {
			return u, err
		}
		u.DiskMiB += more
	}
	return u, nil
}

// quotas are team's quotas; none for a team without a record.
func quotas(ctx context.Context, q querier, team string) (wire.Quotas, error) {
	var raw string
	var out wire.Quotas
	err := q.QueryRowContext(ctx, "SELECT quotas FROM teams WHERE id = ?", team).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return out, nil
	}
	if err != nil {
		return out, errdefs.Internal(err, "read quotas of team %s", team)
	}
	return out, decodeJSON(raw, &out)
}

// CheckDisk refuses addMiB more of disk in team (a volume, a backup) past
// its disk quota.
func (s *SQLite) CheckDisk(ctx context.Context, team string, addMiB int) error {
	q, err := quotas(ctx, s.r, team)
	if err != nil || q.DiskMiB == 0 {
		return err
	}
	u, err := s.usage(ctx, s.r, team)
	if err != nil {
		return err
	}
	return OverQuota(q, u, wire.TeamUsage{DiskMiB: addMiB})
}

// checkSandboxQuota refuses one more sandbox with spec in team when it
// would pass one of the team's quotas. Run inside the inserting
// transaction, it sees every earlier create.
//
// Under a disk quota every sandbox needs a diskMiB: one without has the
// host's disk, unbounded, which no quota could count.
func (s *SQLite) checkSandboxQuota(ctx context.Context, tx *sql.Tx, team string, spec Spec) error {
	var raw string
	err := tx.QueryRowContext(ctx, "SELECT quotas FROM teams WHERE id = ?", team).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return errdefs.NotFound(wire.CodeTeamNotFound, "team %q not found", team)
	}
	if err != nil {
		return errdefs.Internal(err, "read quotas of team %s", team)
	}
	var q wire.Quotas
	if err := decodeJSON(raw, &q); err != nil {
		return err
	}
	if q == (wire.Quotas{}) {
		return nil
	}
	if q.DiskMiB > 0 && spec.DiskMiB == 0 {
		return errdefs.Forbidden(wire.CodeQuotaDisk, "team %q has a disk quota (quota diskMiB %d): give the sandbox a diskMiB, which counts against it", team, q.DiskMiB)
	}
	u, err := s.usage(ctx, tx, team)
	if err != nil {
		return err
	}
	// A new sandbox starts at once: it counts as running too.
	return OverQuota(q, u, wire.TeamUsage{Sandboxes: 1, Running: 1, CPU: spec.CPU, MemoryMiB: spec.MemoryMiB, DiskMiB: spec.DiskMiB})
}

// CheckStart refuses to start one more sandbox of team past its
// maxRunning quota. The caller serialises starts (sandbox/quota.go), as
// the check and the start's state change are two transactions.
func (s *SQLite) CheckStart(ctx context.Context, team string) error {
	t, err := s.GetTeam(ctx, team)
	if err != nil || t.Quotas.MaxRunning == 0 {
		return nil // no team record: no quotas
	}
	u, err := s.usage(ctx, s.r, team)
	if err != nil {
		return err
	}
	return OverQuota(t.Quotas, u, wire.TeamUsage{Running: 1})
}

// checkSnapshotQuota refuses one more snapshot in team past its quota.
func (s *SQLite) checkSnapshotQuota(ctx context.Context, tx *sql.Tx, team string) error {
	var raw string
	if err := tx.QueryRowContext(ctx, "SELECT quotas FROM teams WHERE id = ?", team).Scan(&raw); err != nil {
		return nil // a team without a record has no quotas
	}
	var q wire.Quotas
	if err := decodeJSON(raw, &q); err != nil || q.MaxSnapshots == 0 {
		return err
	}
	u, err := s.usage(ctx, tx, team)
	if err != nil {
		return err
	}
	return OverQuota(q, u, wire.TeamUsage{Snapshots: 1})
}

// OverQuota returns the error naming the first quota of q that usage u
// plus more would pass, or nil.
func OverQuota(q wire.Quotas, u, more wire.TeamUsage) error {
	over := func(limit, have, add float64) bool { return limit > 0 && add > 0 && have+add > limit }
	switch {
	case over(float64(q.MaxSandboxes), float64(u.Sandboxes), float64(more.Sandboxes)):
		return errdefs.Forbidden(wire.CodeQuotaSandboxes, "team %q may hold at most %d sandboxes (quota maxSandboxes); delete one first", u.Team, q.MaxSandboxes)
	case over(float64(q.MaxRunning), float64(u.Running), float64(more.Running)):
		return errdefs.Forbidden(wire.CodeQuotaRunning, "team %q may run at most %d sandboxes at once (quota maxRunning); stop one first", u.Team, q.MaxRunning)
	case over(q.CPU, u.CPU, more.CPU):
		return errdefs.Forbidden(wire.CodeQuotaCPU, "team %q may use at most %g CPUs in all (quota cpu); it has %g", u.Team, q.CPU, u.CPU)
	case over(float64(q.MemoryMiB), float64(u.MemoryMiB), float64(more.MemoryMiB)):
		return errdefs.Forbidden(wire.CodeQuotaMemory, "team %q may use at most %d MiB of memory in all (quota memoryMiB); it has %d", u.Team, q.MemoryMiB, u.MemoryMiB)
	case over(float64(q.DiskMiB), float64(u.DiskMiB), float64(more.DiskMiB)):
		return errdefs.Forbidden(wire.CodeQuotaDisk, "team %q may use at most %d MiB of disk in all (quota diskMiB); it has %d", u.Team, q.DiskMiB, u.DiskMiB)
	case over(float64(q.MaxSnapshots), float64(u.Snapshots), float64(more.Snapshots)):
		return errdefs.Forbidden(wire.CodeQuotaSnapshots, "team %q may hold at most %d snapshots (quota maxSnapshots); delete one first", u.Team, q.MaxSnapshots)
	}
	return nil
}

func scanTeam(sc scanner) (*Team, error) {
	var t Team
	var quotas string
	var created sql.NullString
	if err := sc.Scan(&t.ID, &quotas, &created); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		return nil, errdefs.Internal(err, "read team")
	}
	if err := decodeJSON(quotas, &t.Quotas); err != nil {
		return nil, err
	}
	var err error
	t.CreatedAt, err = decodeTime(created)
	return &t, err
}

func (s *SQLite) SetTeamWebhook(ctx context.Context, h TeamWebhook) error {
	return s.withTx(ctx, func(tx *sql.Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, "SELECT 1 FROM teams WHERE id = ?", h.Team).Scan(&one); err != nil {
			return errdefs.NotFound(wire.CodeTeamNotFound, "team %q not found", h.Team)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO team_webhooks (team, url, secret) VALUES (?, ?, ?)
			ON CONFLICT (team) DO UPDATE SET url = excluded.url, secret = excluded.secret`, h.Team, h.URL, h.Secret)
		if err != nil {
			return errdefs.Internal(err, "set the webhook of team %s", h.Team)
		}
		return nil
	})
}

func (s *SQLite) DeleteTeamWebhook(ctx context.Context, team string) error {
	return s.execOne(ctx, "delete the webhook of team "+team, errdefs.NotFound(wire.CodeWebhookNotFound, "team %q has no webhook", team),
		"DELETE FROM team_webhooks WHERE team = ?", team)
}

func (s *SQLite) ListTeamWebhooks(ctx context.Context) ([]TeamWebhook, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT team, url, secret FROM team_webhooks ORDER BY team")
	if err != nil {
		return nil, errdefs.Internal(err, "list team webhooks")
	}
	defer rows.Close()
	var out []TeamWebhook
	for rows.Next() {
		var h TeamWebhook
		if err := rows.Scan(&h.Team, &h.URL, &h.Secret); err != nil {
			return nil, errdefs.Internal(err, "read team webhook")
		}
		out = append(out, h)
	}
	return out, rows.Err()
}
