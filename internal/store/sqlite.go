package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/sbxhq/sbx/internal/diskspace"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

var _ Store = (*SQLite)(nil)

// SQLite is a Store in one SQLite database file, for a single host.
//
// SQLite allows one writer at a time. Rather than let concurrent writers
// collide and retry, every write goes through one connection (w), so writers
// queue in database/sql instead of failing with SQLITE_BUSY. Reads use a
// separate pool (r): in WAL mode they see the last commit and never block
// the writer or each other.
type SQLite struct {
	w    *sql.DB // exactly one connection; all writes and migrations
	r    *sql.DB // read-only connections
	disk *diskspace.Guard
	rs   stmtCache // prepared reads on r (stmtcache.go)

	// diskOutside is what a team holds on disk outside this store (its
	// volumes and backups), counted against its disk quota (sqlite_team.go).
	diskOutside func(team string) (int, error)
	// sealer seals bucket keys in stored specs (seal.go); nil: clear.
	sealer Sealer
}

// An Option configures OpenSQLite.
type Option func(*SQLite)

// WithDiskGuard makes the store keep g's ballast and release it when a
// write finds the disk full, so that stop and delete can be recorded on a
// full disk; CreateSandbox is refused below g's reserve.
func WithDiskGuard(g *diskspace.Guard) Option {
	return func(s *SQLite) { s.disk = g }
}

// OpenSQLite opens the database at path, creating it (mode 0600) if missing,
// and migrates its schema to the newest version this binary knows. A
// database written by a newer sbx is refused and left untouched.
func OpenSQLite(path string, opts ...Option) (*SQLite, error) {
	if path == "" || strings.ContainsRune(path, '?') {
		// The driver treats '?' as the start of its options.
		return nil, errdefs.Invalid(wire.CodeInvalidDBPath, "database path %q must be non-empty and must not contain '?'", path)
	}
	// Create the file ourselves so it is private from the first byte; SQLite
	// gives its -wal and -shm files the same mode.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, errdefs.Internal(err, "open database %s", path)
	}
	f.Close()

	// synchronous=FULL syncs the WAL on every commit: with NORMAL a commit
	// can be lost to a power cut. _txlock=immediate takes the write lock at
	// BEGIN, so a transaction never fails half-way when upgrading a read
	// lock; busy_timeout covers other processes holding the lock.
	common := "_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)"
	w, err := sql.Open("sqlite", path+"?"+common+"&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate")
	if err != nil {
		return nil, errdefs.Internal(err, "open database %s", path)
	}
	w.SetMaxOpenConns(1)
	if err := migrate(context.Background(), w); err != nil {
		w.Close()
		return nil, err
	}

	r, err := sql.Open("sqlite", path+"?"+common+"&_pragma=query_only(1)")
	if err != nil {
		w.Close()
		return nil, errdefs.Internal(err, "open database %s", path)
	}
	s := &SQLite{w: w, r: r}
	for _, o := range opts {
		o(s)
	}
	if s.disk != nil {
		// A full disk at start-up leaves both for later (see withTx).
		preallocateWAL(path)
		s.disk.Restore()
	}
	return s, nil
}

// walPrealloc is the space given to the WAL beyond its end: more than the
// WAL grows between two checkpoints (1000 pages), so writes reuse it.
const walPrealloc = 8 << 20

// preallocateWAL gives the WAL file blocks past its end without changing its
// size, which SQLite reads. Appending to the WAL then needs no new block, so
// stop and delete are recorded on a full disk without the ballast, which a
// sandbox writing at that moment could take. The blocks last while the WAL
// does (SQLite removes it when the last connection closes). Best effort.
func preallocateWAL(path string) {
	f, err := os.OpenFile(path+"-wal", os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer f.Close()
	unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, 0, walPrealloc)
}

// Close closes the database.
func (s *SQLite) Close() error {
	return errors.Join(s.r.Close(), s.w.Close())
}

// withTx runs fn in a write transaction and commits if fn returns nil.
//
// When the disk is full, SQLite cannot append to its WAL and the write
// fails. Then withTx releases the disk ballast and runs fn again in a fresh
// transaction (the failed one was rolled back), so a stop or a delete is
// recorded even on a full disk; without a ballast to release, the error is
// 507 INSUFFICIENT_STORAGE. After a write succeeds the ballast is made again
// if the disk has room.
// execOne runs one statement, in its own transaction, that must touch a
// row: none touched gives notFound; a failure is an internal error while
// doing what.
func (s *SQLite) execOne(ctx context.Context, what string, notFound error, query string, args ...any) error {
	return s.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, query, args...)
		if err != nil {
			return errdefs.Internal(err, "%s", what)
		}
		if n, err := res.RowsAffected(); err != nil {
			return errdefs.Internal(err, "%s", what)
		} else if n == 0 {
			return notFound
		}
		return nil
	})
}

func (s *SQLite) withTx(ctx context.Context, fn func(*sql.Tx) error) error {
	err := s.tryTx(ctx, fn)
	if isDiskFull(err) && s.disk.Release() {
		err = s.tryTx(ctx, fn)
	}
	if isDiskFull(err) {
		return diskspace.Full(err, "write the store")
	}
	if err == nil {
		s.disk.Restore()
	}
	return err
}

// isDiskFull reports whether a store write failed for want of disk space.
func isDiskFull(err error) bool {
	return err != nil && (sqliteCode(err)&0xff == sqlite3.SQLITE_FULL || diskspace.IsNoSpace(err))
}

func (s *SQLite) tryTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return errdefs.Internal(err, "begin transaction")
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return errdefs.Internal(err, "commit")
	}
	return nil
}

// sqliteCode returns the extended SQLite result code in err, or 0.
func sqliteCode(err error) int {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code()
	}
	return 0
}

// isPrimaryKeyViolation and isUniqueViolation tell the two unique
// constraints of a table apart without reading the message: SQLite reports
// a clash on the PRIMARY KEY index with its own code.
func isPrimaryKeyViolation(err error) bool {
	return sqliteCode(err) == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

func isUniqueViolation(err error) bool {
	return sqliteCode(err) == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}

// timeLayout is RFC 3339 in UTC with a fixed nine-digit fraction, so the
// text sorts in time order and round-trips to the nanosecond.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// encodeTime stores the zero time as NULL, so it reads back as zero.
func encodeTime(t time.Time) (any, error) {
	if t.IsZero() {
		return nil, nil
	}
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		return nil, errdefs.Invalid(wire.CodeInvalidTime, "time %s is outside the years 1 to 9999", t)
	}
	return t.UTC().Format(timeLayout), nil
}

func decodeTime(s sql.NullString) (time.Time, error) {
	if !s.Valid || s.String == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(timeLayout, s.String)
	if err != nil {
		return time.Time{}, errdefs.Internal(err, "stored time %q is malformed", s.String)
	}
	return t, nil
}

// encodeTimes encodes several times, stopping at the first bad one.
func encodeTimes(ts ...time.Time) ([]any, error) {
	out := make([]any, len(ts))
	for i, t := range ts {
		v, err := encodeTime(t)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// now is the store's clock: UTC without a monotonic reading, so a value the
// store hands back equals the value it reads back.
func now() time.Time { return time.Now().UTC().Round(0) }

func encodeJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", errdefs.Internal(err, "encode record")
	}
	return string(b), nil
}

func decodeJSON(s string, v any) error {
	if err := json.Unmarshal([]byte(s), v); err != nil {
		return errdefs.Internal(err, "stored record is malformed")
	}
	return nil
}

// nullIfEmpty stores "" as NULL, so that the UNIQUE constraint on a column
// lets many rows leave it empty.
func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// queryAll runs the read query q on db and scans each row with scan; what
// names the list in errors ("list pools").
func queryAll[T any](ctx context.Context, db *sql.DB, what string, scan func(scanner) (T, error), q string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, errdefs.Internal(err, "%s", what)
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, errdefs.Internal(err, "%s", what)
	}
	return out, nil
}
