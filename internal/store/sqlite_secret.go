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

// Secret is a team's secret as stored: its value sealed (encrypted and
// authenticated) by package secret, which alone holds the key.
type Secret struct {
	Team      string
	Name      string
	Sealed    []byte
	Size      int // of the plain value
	CreatedAt time.Time
	// Hosts the value may be sent to (httpegress.ParseSecretHosts); none:
	// nowhere (a secret stored before hosts existed).
	Hosts     []string
	AllowHTTP bool // plain HTTP as well as HTTPS
}

// SecretStore persists secrets. Lookups are scoped to the team of ctx.
type SecretStore interface {
	// PutSecret inserts or replaces s (team from ctx when s.Team is "").
	PutSecret(ctx context.Context, s *Secret) error
	// GetSecret finds a secret of team by name; NotFound when missing.
	GetSecret(ctx context.Context, team, name string) (*Secret, error)
	// ListSecrets lists the secrets of ctx's team (all for the system scope), by name.
	ListSecrets(ctx context.Context) ([]Secret, error)
	// DeleteSecret removes one of ctx's team; NotFound when missing.
	DeleteSecret(ctx context.Context, name string) error
	// SetSecretHosts replaces where a secret of team may be sent; NotFound when missing.
	SetSecretHosts(ctx context.Context, team, name string, hosts []string, allowHTTP bool) error
}

var _ SecretStore = (*SQLite)(nil)

func secretMissing(name string) error {
	return errdefs.NotFound(wire.CodeSecretNotFound, "secret %q not found", name)
}

// PutSecret implements SecretStore.
func (s *SQLite) PutSecret(ctx context.Context, sec *Secret) error {
	var err error
	if sec.Team, err = teamFor(ctx, sec.Team); err != nil {
		return err
	}
	if sec.CreatedAt.IsZero() {
		sec.CreatedAt = now()
	}
	at, err := encodeTime(sec.CreatedAt)
	if err != nil {
		return err
	}
	hosts, err := encodeJSON(nonNil(sec.Hosts))
	if err != nil {
		return err
	}
	return s.withTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT OR REPLACE INTO secrets (team, name, sealed, size, created_at, hosts, allow_http) VALUES (?, ?, ?, ?, ?, ?, ?)",
			sec.Team, sec.Name, sec.Sealed, sec.Size, at, hosts, sec.AllowHTTP)
		if err != nil {
			return errdefs.Internal(err, "write secret %s", sec.Name)
		}
		return nil
	})
}

// GetSecret implements SecretStore. The team is explicit: the proxy reads
// a sandbox's team's secrets with no principal in its context.
func (s *SQLite) GetSecret(ctx context.Context, team, name string) (*Secret, error) {
	clause, args, err := teamClause(ctx, "team")
	if err != nil {
		return nil, err
	}
	row := s.r.QueryRowContext(ctx, "SELECT "+secretColumns+" FROM secrets WHERE team = ? AND name = ?"+clause,
		append([]any{team, name}, args...)...)
	sec, err := scanSecret(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, secretMissing(name)
	}
	return sec, err
}

// ListSecrets implements SecretStore.
func (s *SQLite) ListSecrets(ctx context.Context) ([]Secret, error) {
	clause, args, err := teamClause(ctx, "team")
	if err != nil {
		return nil, err
	}
	return queryAll(ctx, s.r, "list secrets", func(sc scanner) (Secret, error) {
		sec, err := scanSecret(sc)
		if err != nil {
			return Secret{}, err
		}
		return *sec, nil
	}, "SELECT "+secretColumns+" FROM secrets WHERE 1 = 1"+clause+" ORDER BY team, name", args...)
}

// SetSecretHosts implements SecretStore.
func (s *SQLite) SetSecretHosts(ctx context.Context, team, name string, hosts []string, allowHTTP bool) error {
	clause, args, err := teamClause(ctx, "team")
	if err != nil {
		return err
	}
	enc, err := encodeJSON(nonNil(hosts))
	if err != nil {
		return err
	}
	return s.execOne(ctx, "set the hosts of secret "+name, secretMissing(name),
		"UPDATE secrets SET hosts = ?, allow_http = ? WHERE team = ? AND name = ?"+clause, append([]any{enc, allowHTTP, team, name}, args...)...)
}

func nonNil(hosts []string) []string {
	if hosts == nil {
		return []string{}
	}
	return hosts
}

// DeleteSecret implements SecretStore.
func (s *SQLite) DeleteSecret(ctx context.Context, name string) error {
	clause, args, err := teamClause(ctx, "team")
	if err != nil {
		return err
	}
	if clause == "" {
		clause, args = " AND team = ?", []any{auth.TeamOf(ctx)}
	}
	return s.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM secrets WHERE name = ?"+clause, append([]any{name}, args...)...)
		if err != nil {
			return errdefs.Internal(err, "delete secret %s", name)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return secretMissing(name)
		}
		return nil
	})
}

const secretColumns = "team, name, sealed, size, created_at, hosts, allow_http"

func scanSecret(row scanner) (*Secret, error) {
	var sec Secret
	var at sql.NullString
	var hosts string
	if err := row.Scan(&sec.Team, &sec.Name, &sec.Sealed, &sec.Size, &at, &hosts, &sec.AllowHTTP); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		return nil, errdefs.Internal(err, "read secret")
	}
	if err := decodeJSON(hosts, &sec.Hosts); err != nil {
		return nil, err
	}
	var err error
	sec.CreatedAt, err = decodeTime(at)
	return &sec, err
}
