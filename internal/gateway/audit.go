package gateway

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// AuditLines is the gateway's audit store: each entry one JSON line on w
// (the container's stdout by default, which the cluster's log pipeline
// keeps), as the gateway has no database. Entries are not read back: GET
// /v1/audit is not served by the gateway.
type AuditLines struct {
	mu  sync.Mutex
	w   io.Writer
	seq int64
}

// NewAuditLines writes entries to w.
func NewAuditLines(w io.Writer) *AuditLines { return &AuditLines{w: w} }

// AppendAudit writes entries, numbered per gateway process.
func (a *AuditLines) AppendAudit(_ context.Context, entries []wire.AuditEntry) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, e := range entries {
		a.seq++
		e.Seq = a.seq
		line, err := json.Marshal(struct {
			Audit wire.AuditEntry `json:"audit"`
		}{e})
		if err != nil {
			return err
		}
		if _, err := a.w.Write(append(line, '\n')); err != nil {
			return err
		}
	}
	return nil
}

// ListAudit is not served: the lines are the log pipeline's.
func (a *AuditLines) ListAudit(context.Context, string, int64, int) ([]wire.AuditEntry, error) {
	return nil, errdefs.NotFound(wire.CodeRouteNotFound, "the gateway writes its audit log as JSON lines to its log; read it there")
}

// PruneAudit keeps nothing to prune.
func (a *AuditLines) PruneAudit(context.Context, time.Time) (int64, error) { return 0, nil }
