package sandbox

import (
	"context"
	"sync"
	"time"

	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// lifecycle is the Manager's in-memory lifecycle state: activity, shared
// lazy starts, the scheduler's wake-up and the event notifier. The store
// holds what must survive a restart; this holds what may be lost with it.
type lifecycle struct {
	mu         sync.Mutex
	activity   map[string]*activity   // by sandbox id
	starts     map[string]*startCall  // lazy starts under way, by sandbox id
	busy       map[string]*workerSlot // deadlines being acted on, with the worker slot each holds (nil until it has one)
	retry      map[string]retryState  // failed deadline actions wait until then
	wake       chan struct{}          // pokes the scheduler
	events     notifier
	once       sync.Once
	scheduling bool      // the scheduler runs
	owner      LifeOwner // import.go: decides cluster sandboxes' due actions
}

// activity is what the Manager knows of a sandbox's use since it started.
type activity struct {
	last     time.Time // last request start or end
	holds    int       // requests and streams open now
	draining bool      // an idle stop has begun: new requests wait for it and start again
}

func (l *lifecycle) init() {
	l.once.Do(func() {
		l.activity = map[string]*activity{}
		l.starts = map[string]*startCall{}
		l.busy = map[string]*workerSlot{}
		l.retry = map[string]retryState{}
		l.wake = make(chan struct{}, 1)
	})
}

// get returns id's activity, creating it. l.mu must be held.
func (l *lifecycle) get(id string) *activity {
	l.init()
	a := l.activity[id]
	if a == nil {
		a = &activity{}
		l.activity[id] = a
	}
	return a
}

func (l *lifecycle) noteActivity(id string, t time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a := l.get(id); t.After(a.last) {
		a.last = t
	}
}

// activityOf returns the last activity of id and whether it is held now.
func (l *lifecycle) activityOf(id string) (last time.Time, held bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a := l.activity[id]; a != nil {
		return a.last, a.holds > 0
	}
	return time.Time{}, false
}

// forget drops what is known of a deleted sandbox.
func (l *lifecycle) forget(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.init()
	delete(l.activity, id)
	delete(l.retry, id)
}

// poke makes the scheduler look at the deadlines again.
func (l *lifecycle) poke() {
	l.init()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Touch records activity on a sandbox now. Unknown sandboxes are ignored.
func (m *Manager) Touch(ctx context.Context, idOrName string) {
	sb, err := m.cfg.Store.GetSandbox(ctx, idOrName)
	if err != nil {
		return
	}
	m.touch(ctx, sb, time.Now().UTC())
}

// Hold records activity on a sandbox and keeps it active until release is
// called: the API holds every request to /v1/sandboxes/{id}/… for as long as
// it runs, so an open stream, log follow or terminal keeps the sandbox from
// being stopped for idleness. release may be called more than once.
func (m *Manager) Hold(ctx context.Context, idOrName string) (release func()) {
	sb, err := m.cfg.Store.GetSandbox(ctx, idOrName)
	if err != nil {
		return func() {}
	}
	m.life.mu.Lock()
	m.life.get(sb.ID).holds++
	m.life.mu.Unlock()
	m.touch(ctx, sb, time.Now().UTC())
	var once sync.Once
	return func() {
		once.Do(func() {
			m.life.mu.Lock()
			if a := m.life.activity[sb.ID]; a != nil { // nil: deleted meanwhile
				a.holds--
				if now := time.Now().UTC(); now.After(a.last) {
					a.last = now
				}
			}
			m.life.mu.Unlock()
			// The stored deadline is not moved here: if it comes due first,
			// the scheduler sees this activity and moves it then.
		})
	}
}

// touch notes activity at now and, when that moves the stored idle deadline
// later by more than a tenth of the idle interval, stores it. Skipping the
// smaller moves saves a write per request on busy sandboxes; the scheduler
// still acts on the activity it holds in memory, so only across a daemon
// restart can a sandbox stop after 0.9 of its interval.
func (m *Manager) touch(ctx context.Context, sb *store.Sandbox, now time.Time) {
	m.life.noteActivity(sb.ID, now)
	if sb.State != wire.StateStarted {
		return
	}
	_, held := m.life.activityOf(sb.ID)
	at, action, _ := plan(sb, now, held, now)
	p := policyOf(sb.Spec)
	switch {
	case action == actionStop && sb.ExpiresAction == actionStop:
		if !at.After(sb.ExpiresAt.Add(seconds(p.AutoStopSeconds) / 10)) {
			return
		}
	case action == sb.ExpiresAction && at.Equal(sb.ExpiresAt):
		// No idle deadline to move: store the activity time now and then,
		// so that it is roughly right after a restart too.
		if now.Sub(sb.LastActivityAt) < time.Minute {
			return
		}
	}
	if _, err := m.cfg.Store.SetDeadline(context.WithoutCancel(ctx), sb.ID, sb.State, now, at, action); err != nil {
		m.log.Warn("record activity", "id", sb.ID, "err", err)
	}
}

// beginDrain marks id as being stopped for idleness unless a request holds
// it; Agent then sends new requests through a fresh start instead of to the
// instance about to go.
func (l *lifecycle) beginDrain(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.get(id)
	if a.holds > 0 {
		return false
	}
	a.draining = true
	return true
}

func (l *lifecycle) endDrain(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a := l.activity[id]; a != nil {
		a.draining = false
	}
}

func (l *lifecycle) isDraining(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.activity[id]
	return a != nil && a.draining
}

// withActivity returns sb with what memory knows beyond the store: the
// latest activity and the deadline that follows from it.
func (m *Manager) withActivity(sb *store.Sandbox) *store.Sandbox {
	active, held := m.life.activityOf(sb.ID)
	if held {
		active = time.Now().UTC()
	}
	if active.After(sb.LastActivityAt) {
		sb.LastActivityAt = active
	}
	sb.ExpiresAt, sb.ExpiresAction, _ = plan(sb, sb.LastActivityAt, held, time.Now().UTC())
	return sb
}
