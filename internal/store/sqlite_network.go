package store

import (
	"context"
	"database/sql"
	"errors"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

var _ NetworkStore = (*SQLite)(nil)

func isForeignKeyViolation(err error) bool {
	return sqliteCode(err) == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}

func sandboxMissing(id string) error {
	return errdefs.NotFound(wire.CodeSandboxNotFound, "sandbox %q not found", id)
}

// CreateLease records l. It sets l.CreatedAt to now if zero.
func (s *SQLite) CreateLease(ctx context.Context, l *Lease) error {
	if l == nil || l.SandboxID == "" || l.IP == "" {
		return errdefs.Invalid(wire.CodeInvalidLease, "a lease needs a sandbox id and an address")
	}
	created := l.CreatedAt
	if created.IsZero() {
		created = now()
	}
	at, err := encodeTime(created)
	if err != nil {
		return err
	}
	err = s.withTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO leases (sandbox_id, ip, created_at) VALUES (?, ?, ?)", l.SandboxID, l.IP, at)
		switch {
		case isPrimaryKeyViolation(err):
			return errdefs.Conflict(wire.CodeAddressTaken, "sandbox %s already holds an address", l.SandboxID)
		case isUniqueViolation(err):
			return errdefs.Conflict(wire.CodeAddressTaken, "address %s is held by another sandbox", l.IP)
		case isForeignKeyViolation(err):
			return sandboxMissing(l.SandboxID)
		case err != nil:
			return errdefs.Internal(err, "write lease of %s", l.SandboxID)
		}
		return nil
	})
	if err != nil {
		return err
	}
	l.CreatedAt = created
	return nil
}

// GetLease returns the lease of a sandbox.
func (s *SQLite) GetLease(ctx context.Context, sandboxID string) (*Lease, error) {
	row := s.r.QueryRowContext(ctx, "SELECT sandbox_id, ip, created_at FROM leases WHERE sandbox_id = ?", sandboxID)
	l, err := scanLease(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errdefs.NotFound(wire.CodeLeaseNotFound, "sandbox %s holds no address", sandboxID)
	}
	return l, err
}

// ListLeases returns every lease in address order.
func (s *SQLite) ListLeases(ctx context.Context) ([]Lease, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT sandbox_id, ip, created_at FROM leases ORDER BY ip")
	if err != nil {
		return nil, errdefs.Internal(err, "list leases")
	}
	defer rows.Close()
	var out []Lease
	for rows.Next() {
		l, err := scanLease(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *l)
	}
	if err := rows.Err(); err != nil {
		return nil, errdefs.Internal(err, "list leases")
	}
	return out, nil
}

func scanLease(sc scanner) (*Lease, error) {
	var l Lease
	var at sql.NullString
	if err := sc.Scan(&l.SandboxID, &l.IP, &at); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		return nil, errdefs.Internal(err, "read lease")
	}
	t, err := decodeTime(at)
	if err != nil {
		return nil, err
	}
	l.CreatedAt = t
	return &l, nil
}

// DeleteLease releases the lease of a sandbox, if any.
func (s *SQLite) DeleteLease(ctx context.Context, sandboxID string) error {
	return s.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "DELETE FROM leases WHERE sandbox_id = ?", sandboxID); err != nil {
			return errdefs.Internal(err, "delete lease of %s", sandboxID)
		}
		return nil
	})
}

// CreatePort records an exposed port. It sets p.CreatedAt to now if zero.
func (s *SQLite) CreatePort(ctx context.Context, p *Port) error {
	if p == nil || p.SandboxID == "" || p.Port < 1 || p.Port > 65535 || p.Token == "" {
		return errdefs.Invalid(wire.CodeInvalidPort, "an exposed port needs a sandbox id, a port from 1 to 65535 and a token")
	}
	created := p.CreatedAt
	if created.IsZero() {
		created = now()
	}
	at, err := encodeTime(created)
	if err != nil {
		return err
	}
	err = s.withTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO ports (sandbox_id, port, public, token, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?)",
			p.SandboxID, p.Port, p.Public, p.Token, p.CreatedBy, at)
		switch {
		case isPrimaryKeyViolation(err):
			return errdefs.Conflict(wire.CodePortExists, "port %d of sandbox %s is already exposed", p.Port, p.SandboxID)
		case isForeignKeyViolation(err):
			return sandboxMissing(p.SandboxID)
		case err != nil:
			return errdefs.Internal(err, "write port %d of %s", p.Port, p.SandboxID)
		}
		return nil
	})
	if err != nil {
		return err
	}
	p.CreatedAt = created
	return nil
}

const portColumns = "sandbox_id, port, public, token, created_by, created_at"

// GetPort returns one exposed port of a sandbox.
func (s *SQLite) GetPort(ctx context.Context, sandboxID string, port int) (*Port, error) {
	row := s.r.QueryRowContext(ctx, "SELECT "+portColumns+" FROM ports WHERE sandbox_id = ? AND port = ?", sandboxID, port)
	p, err := scanPort(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, portMissing(sandboxID, port)
	}
	return p, err
}

func portMissing(sandboxID string, port int) error {
	return errdefs.NotFound(wire.CodePortNotFound, "port %d of sandbox %s is not exposed", port, sandboxID)
}

// ListPorts returns the exposed ports of a sandbox, or of all sandboxes.
func (s *SQLite) ListPorts(ctx context.Context, sandboxID string) ([]Port, error) {
	q := "SELECT " + portColumns + " FROM ports"
	var args []any
	if sandboxID != "" {
		q += " WHERE sandbox_id = ?"
		args = append(args, sandboxID)
	}
	rows, err := s.r.QueryContext(ctx, q+" ORDER BY sandbox_id, port", args...)
	if err != nil {
		return nil, errdefs.Internal(err, "list ports")
	}
	defer rows.Close()
	var out []Port
	for rows.Next() {
		p, err := scanPort(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *p)
	}
	if err := rows.Err(); err != nil {
		return nil, errdefs.Internal(err, "list ports")
	}
	return out, nil
}

func scanPort(sc scanner) (*Port, error) {
	var p Port
	var at sql.NullString
	if err := sc.Scan(&p.SandboxID, &p.Port, &p.Public, &p.Token, &p.CreatedBy, &at); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		return nil, errdefs.Internal(err, "read port")
	}
	t, err := decodeTime(at)
	if err != nil {
		return nil, err
	}
	p.CreatedAt = t
	return &p, nil
}

// DeletePort unexposes a port.
func (s *SQLite) DeletePort(ctx context.Context, sandboxID string, port int) error {
	return s.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM ports WHERE sandbox_id = ? AND port = ?", sandboxID, port)
		if err != nil {
			return errdefs.Internal(err, "delete port %d of %s", port, sandboxID)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return portMissing(sandboxID, port)
		}
		return nil
	})
}
