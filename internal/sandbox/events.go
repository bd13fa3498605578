package sandbox

import (
	"context"
	"sync"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Every state change is an event in the store (transition writes both in
// one transaction). Followers of the event streams and waiters for a state
// read the store; the notifier only wakes them when there is something new,
// so a slow follower never holds up the Manager and never misses an event.
//
// A deleted sandbox's record and events are removed; a last "deleted" event
// is appended after, so the global stream and webhooks see every deletion.

// notifier wakes everyone waiting on its channel at each broadcast.
type notifier struct {
	mu sync.Mutex
	ch chan struct{}
}

// changed returns a channel that is closed at the next broadcast. Take it
// before reading the store, so nothing recorded after the read is missed.
func (n *notifier) changed() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	return n.ch
}

func (n *notifier) broadcast() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch != nil {
		close(n.ch)
	}
	n.ch = make(chan struct{})
}

// published tells followers, webhooks and the scheduler about a recorded event.
func (m *Manager) published(ev store.Event) {
	m.life.events.broadcast()
	m.life.poke()
	if m.cfg.OnEvent != nil {
		m.cfg.OnEvent(ev)
	}
}

// recordDeleted appends the "deleted" event of a sandbox whose record is
// gone, with the reason of its deletion, and forgets its activity.
func (m *Manager) recordDeleted(ctx context.Context, sb *store.Sandbox) {
	m.life.forget(sb.ID)
	if sb.Pool != "" {
		return // a warm pool's instance records no events (pool.go)
	}
	ev := &store.Event{SandboxID: sb.ID, SandboxName: sb.Name, Team: sb.Team, State: wire.StateDeleted, Reason: sb.Reason}
	if err := m.cfg.Store.AppendEvent(ctx, ev); err != nil {
		m.log.Error("record deletion", "id", sb.ID, "err", err)
		return
	}
	m.published(*ev)
}

// Events returns up to limit events with Seq > after of one sandbox (by id
// or name) or, with idOrName "", of all.
func (m *Manager) Events(ctx context.Context, idOrName string, after int64, limit int) ([]store.Event, error) {
	id := ""
	if idOrName != "" {
		sb, err := m.cfg.Store.GetSandbox(ctx, idOrName)
		if err != nil {
			return nil, err
		}
		id = sb.ID
	}
	return m.cfg.Store.ListEvents(ctx, id, after, limit)
}

// EventsChanged returns a channel that is closed when the next event is
// recorded. Take it before reading events.
func (m *Manager) EventsChanged() <-chan struct{} { return m.life.events.changed() }

// Closed is closed when the Manager shuts down; streams end then.
func (m *Manager) Closed() <-chan struct{} { return m.closed }

// WaitState waits up to timeout for a sandbox to be in state and returns it.
// Waiting for "deleted" ends when the record is gone. A timeout is an
// Unavailable error with code WAIT_TIMEOUT (503), since waiting again may
// succeed.
func (m *Manager) WaitState(ctx context.Context, idOrName string, state wire.State, timeout time.Duration) (*store.Sandbox, error) {
	sb, err := m.cfg.Store.GetSandbox(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	last := sb
	t := time.NewTimer(timeout)
	defer t.Stop()
	var goneSince time.Time
	for {
		changed := m.EventsChanged()
		sb, err := m.cfg.Store.GetSandbox(ctx, last.ID)
		switch {
		case errdefs.Is(err, errdefs.KindNotFound) && state == wire.StateDeleted:
			// Answer once the "deleted" event is recorded too (just after the
			// record goes), so a caller reading events next finds it.
			if goneSince.IsZero() {
				goneSince = time.Now()
			}
			if ev, ok := m.deletedEvent(ctx, last.ID); ok || time.Since(goneSince) > time.Second {
				gone := *last
				gone.State, gone.Reason = wire.StateDeleted, ev.Reason
				return &gone, nil
			}
			select {
			case <-changed:
			case <-time.After(100 * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			continue
		case errdefs.Is(err, errdefs.KindNotFound):
			return nil, errdefs.NotFound(wire.CodeSandboxNotFound, "sandbox %s was deleted before it was %s", refOf(last), state)
		case err != nil:
			return nil, err
		case sb.State == state:
			return m.withActivity(sb), nil
		}
		last = sb
		select {
		case <-changed:
		case <-t.C:
			return nil, errdefs.Unavailable(wire.CodeWaitTimeout, "sandbox %s is %s, not %s, after waiting %s", refOf(sb), sb.State, state, timeout)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-m.closed:
			return nil, errdefs.Unavailable(wire.CodeShuttingDown, "the daemon is shutting down")
		}
	}
}

// deletedEvent returns the "deleted" event of a sandbox whose record is gone.
func (m *Manager) deletedEvent(ctx context.Context, id string) (store.Event, bool) {
	evs, err := m.cfg.Store.ListEvents(ctx, id, 0, 0)
	if err != nil {
		return store.Event{}, false
	}
	for _, e := range evs {
		if e.State == wire.StateDeleted {
			return e, true
		}
	}
	return store.Event{}, false
}
