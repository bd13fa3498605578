package authz

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// AuditLog keeps every mutating request (who, team, what, result, when) in
// the store. Requests only queue an entry; one goroutine writes the queue
// in batches, so an exec round trip does not wait for a database commit.
// Entries older than the retention are pruned hourly.
type AuditLog struct {
	store     store.AuditStore
	retention time.Duration

	mu      sync.Mutex
	pending []wire.AuditEntry
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
}

// auditBatchEvery bounds how long an entry waits before it is written.
const auditBatchEvery = 200 * time.Millisecond

// NewAuditLog starts writing entries to st; retention <= 0 keeps them forever.
func NewAuditLog(st store.AuditStore, retention time.Duration) *AuditLog {
	a := &AuditLog{store: st, retention: retention, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go a.run()
	return a
}

// Append queues an entry.
func (a *AuditLog) Append(e wire.AuditEntry) {
	a.mu.Lock()
	a.pending = append(a.pending, e)
	a.mu.Unlock()
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// List writes what is queued, then returns team's entries after seq (every
// team's for team "").
func (a *AuditLog) List(ctx context.Context, team string, after int64, limit int) ([]wire.AuditEntry, error) {
	a.Flush(ctx) // what was done just before is in the answer
	return a.store.ListAudit(ctx, team, after, limit)
}

// Flush writes what is queued.
func (a *AuditLog) Flush(ctx context.Context) {
	a.mu.Lock()
	batch := a.pending
	a.pending = nil
	a.mu.Unlock()
	if err := a.store.AppendAudit(ctx, batch); err != nil {
		slog.Error("write the audit log", "entries", len(batch), "err", err)
	}
}

func (a *AuditLog) run() {
	defer close(a.done)
	prune := time.NewTicker(time.Hour)
	defer prune.Stop()
	a.prune()
	for {
		select {
		case <-a.kick:
			// Let a burst gather into one transaction.
			select {
			case <-time.After(auditBatchEvery):
			case <-a.stop:
			}
			a.Flush(context.Background())
		case <-prune.C:
			a.prune()
		case <-a.stop:
			a.Flush(context.Background())
			return
		}
	}
}

func (a *AuditLog) prune() {
	if a.retention <= 0 {
		return
	}
	if _, err := a.store.PruneAudit(context.Background(), time.Now().Add(-a.retention)); err != nil {
		slog.Warn("prune the audit log", "err", err)
	}
}

// Close writes what is queued and stops.
func (a *AuditLog) Close() {
	close(a.stop)
	<-a.done
}

// auditWriter remembers a response's status and the start of an error
// body (for its code).
type auditWriter struct {
	http.ResponseWriter
	code int
	head bytes.Buffer
}

func (w *auditWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *auditWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	if w.code >= 400 && w.head.Len() < 1024 {
		w.head.Write(b[:min(len(b), 1024-w.head.Len())])
	}
	return w.ResponseWriter.Write(b)
}

// errCode is the error code of an error answer in the API's JSON form.
func (w *auditWriter) errCode() wire.Code {
	if w.status() < 400 {
		return ""
	}
	var body struct {
		Error struct{ Code wire.Code } `json:"error"`
	}
	if json.Unmarshal(w.head.Bytes(), &body) != nil {
		return ""
	}
	return body.Error.Code
}

func (w *auditWriter) status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}

func (w *auditWriter) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

func (w *auditWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
