package sandbox

import (
	"context"
	"errors"
	"github.com/sbxhq/sbx/internal/auth"
	"time"

	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// One goroutine acts on deadlines. It asks the store for the soonest
// (ListExpiring), acts on those that are due, each in its own goroutine
// (at most maxDueActions at once), and sleeps until the next one or until
// poked: every recorded event and every policy change pokes it.
//
// Acting re-reads the record under the sandbox's lock and recomputes the
// deadline with the activity held in memory, which may be later than the
// stored one (touch stores only moves of more than a tenth of the
// interval); if it is not due after all, the new deadline is stored and
// nothing happens.

const (
	dueBatch      = 64
	maxDueActions = 4
	retryFirst    = 10 * time.Second // after a failed action, doubling
	retryMax      = time.Hour
	// retryLocked is when to look again at a due sandbox that another
	// operation holds: a worker never waits on a sandbox's lock, which a
	// long graceful stop may hold for its whole grace period.
	retryLocked = time.Second

	// deletedEventsKept is how long the "deleted" event of a sandbox stays
	// in the global event stream; pruned daily.
	deletedEventsKept = 7 * 24 * time.Hour
	pruneEvery        = 24 * time.Hour
)

// startPolicies recomputes every stored deadline against the records as
// Reconcile left them, then starts the scheduler. A deadline that passed
// while the daemon was down is due at once and so fires once now.
func (m *Manager) startPolicies(ctx context.Context) {
	m.life.mu.Lock()
	m.life.init()
	started := m.life.scheduling
	m.life.scheduling = true
	m.life.mu.Unlock()
	if started {
		return
	}
	all, err := m.cfg.Store.ListSandboxes(ctx, store.Filter{})
	if err != nil {
		m.log.Error("load deadlines", "err", err)
	}
	now := time.Now().UTC()
	for _, sb := range all {
		at, action, _ := plan(sb, sb.LastActivityAt, false, now)
		if !at.Equal(sb.ExpiresAt) || action != sb.ExpiresAction {
			if _, err := m.cfg.Store.SetDeadline(ctx, sb.ID, sb.State, sb.LastActivityAt, at, action); err != nil {
				m.log.Error("store deadline", "id", sb.ID, "err", err)
			}
		}
	}
	m.wg.Add(1)
	go m.runScheduler()
}

func (m *Manager) runScheduler() {
	defer m.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	sem := make(chan struct{}, maxDueActions)
	var nextPrune time.Time
	for {
		if time.Now().After(nextPrune) {
			m.pruneEvents()
			nextPrune = time.Now().Add(pruneEvery)
		}
		next := m.dispatchDue(sem)
		if next.IsZero() || nextPrune.Before(next) {
			next = nextPrune
		}
		timer.Stop()
		timer.Reset(max(time.Until(next), 0))
		select {
		case <-m.closed:
			return
		case <-m.life.wake:
		case <-timer.C:
		}
	}
}

// pruneEvents drops old events of deleted sandboxes.
func (m *Manager) pruneEvents() {
	n, err := m.cfg.Store.PruneEvents(auth.System(m.ctx, "prune events"), time.Now().Add(-deletedEventsKept))
	if err != nil {
		m.log.Error("prune events", "err", err)
	} else if n > 0 {
		m.log.Info("pruned events of deleted sandboxes", "count", n)
	}
}

// dispatchDue starts an action for each due deadline that is not being
// acted on or waiting to retry, and returns when to look again (zero: only
// when poked).
func (m *Manager) dispatchDue(sem chan struct{}) (next time.Time) {
	ctx := auth.System(m.ctx, "lifecycle deadlines")
	list, err := m.cfg.Store.ListExpiring(ctx, dueBatch)
	if err != nil {
		m.log.Error("list deadlines", "err", err)
		return time.Now().Add(retryFirst)
	}
	soonest := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	now := time.Now()
	for _, sb := range list {
		if sb.ExpiresAt.After(now) {
			soonest(sb.ExpiresAt)
			break // the rest are later still
		}
		m.life.mu.Lock()
		_, busy := m.life.busy[sb.ID]
		retry := m.life.retry[sb.ID].at
		if !busy && !retry.After(now) {
			m.life.busy[sb.ID] = nil
		}
		m.life.mu.Unlock()
		switch {
		case busy: // its action pokes when done
			continue
		case retry.After(now):
			soonest(retry)
			continue
		}
		m.observeLag(sb.ExpiresAt)
		m.wg.Add(1)
		go func(id string) {
			defer m.wg.Done()
			select {
			case sem <- struct{}{}:
			case <-m.closed:
				return
			}
			// The action frees its slot early while it waits on an agent.
			slot := &workerSlot{release: func() { <-sem }}
			m.life.mu.Lock()
			m.life.busy[id] = slot
			m.life.mu.Unlock()
			err := m.actOnDeadline(ctx, id)
			slot.free()
			m.life.mu.Lock()
			delete(m.life.busy, id)
			switch {
			case errors.Is(err, errLocked):
				m.life.retry[id] = retryState{at: time.Now().Add(retryLocked), wait: m.life.retry[id].wait}
			case err != nil:
				wait := retryFirst
				if prev, ok := m.life.retry[id]; ok && prev.wait > 0 {
					wait = min(2*prev.wait, retryMax)
				}
				m.life.retry[id] = retryState{at: time.Now().Add(wait), wait: wait}
				m.log.Error("lifecycle action failed; will retry", "id", id, "in", wait, "err", err)
			default:
				delete(m.life.retry, id)
			}
			m.life.mu.Unlock()
			m.life.poke()
		}(sb.ID)
	}
	if len(list) == dueBatch && next.IsZero() {
		next = now.Add(time.Second) // more may be due beyond this batch
	}
	return next
}

// retryState is when a failed action may run again, and the wait before it.
type retryState struct {
	at   time.Time
	wait time.Duration
}

// errLocked says that another operation holds the sandbox: look again later.
var errLocked = errors.New("the sandbox is locked by another operation")

// actOnDeadline performs the due action of a sandbox, if it is still due
// and no other operation holds it (errLocked).
func (m *Manager) actOnDeadline(ctx context.Context, id string) error {
	unlock, ok := m.locks.TryLock(id)
	if !ok {
		return errLocked
	}
	defer unlock()
	sb, err := m.cfg.Store.GetSandbox(ctx, id)
	if err != nil {
		return nil // deleted meanwhile
	}
	now := time.Now().UTC()
	active, held := m.life.activityOf(id)
	active = later(active, sb.LastActivityAt)
	at, action, reason := plan(sb, active, held, now)
	if at.IsZero() || at.After(now) {
		_, err := m.cfg.Store.SetDeadline(ctx, id, sb.State, active, at, action)
		return err
	}
	if handled, err := m.delegate(ctx, sb, active, action, reason); handled { // import.go
		return err
	}
	switch action {
	case actionStop, actionPause:
		if !m.life.beginDrain(id) {
			// A request arrived since: it keeps the sandbox; look again later.
			at, action, _ := plan(sb, now, false, now)
			_, err := m.cfg.Store.SetDeadline(ctx, id, sb.State, now, at, action)
			return err
		}
		defer m.life.endDrain(id)
		if action == actionPause {
			// A refused pause (CHECKPOINT_REFUSED) leaves it started, which
			// counts as activity: the next try is an interval later.
			m.log.Info("pausing idle sandbox", "id", id, "idleSince", active)
			return m.pauseLocked(ctx, sb, reason)
		}
		m.log.Info("stopping idle sandbox", "id", id, "idleSince", active)
		return m.stop(ctx, sb, StopOptions{}, reason)
	case actionArchive:
		return m.archiveLocked(ctx, sb, reason)
	case actionDelete:
		m.log.Info("deleting sandbox", "id", id, "reason", reason)
		if err := m.transition(ctx, sb, wire.StateDeleting, reason, ""); err != nil {
			return err
		}
		return m.finishDelete(ctx, sb)
	}
	return nil
}
