package store

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache keeps the prepared statements of the hottest read queries
// (GetSandbox: every toolbox call looks its sandbox up, twice). SQLite
// compiles a statement in about as long as a point lookup takes to run, so
// preparing it once halves the lookup. database/sql re-prepares a Stmt on
// each pooled connection as needed and closes them with the DB.
type stmtCache struct {
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

// queryRow runs the read query q on db through a cached statement; a query
// that cannot be prepared runs unprepared (and reports its error there).
func (c *stmtCache) queryRow(ctx context.Context, db *sql.DB, q string, args ...any) *sql.Row {
	c.mu.Lock()
	st := c.stmts[q]
	c.mu.Unlock()
	if st == nil {
		var err error
		if st, err = db.PrepareContext(ctx, q); err != nil {
			return db.QueryRowContext(ctx, q, args...)
		}
		c.mu.Lock()
		if prev := c.stmts[q]; prev != nil {
			st.Close()
			st = prev
		} else {
			if c.stmts == nil {
				c.stmts = make(map[string]*sql.Stmt)
			}
			c.stmts[q] = st
		}
		c.mu.Unlock()
	}
	return st.QueryRowContext(ctx, args...)
}
