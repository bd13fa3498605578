package sandbox

import (
	"context"
	"sync"
	"time"
)

// Code inside a sandbox is hostile (docs/architecture.md, invariant 9): it can stop or
// ptrace its own agent, which then accepts connections (the kernel queues
// them) and never answers. So every call the Manager makes to an agent has a
// deadline, and what the Manager does when it passes never needs the agent:
// a stop kills the instance through the runtime, a pause or snapshot fails.

// DefaultAgentCallTimeout bounds one call the Manager makes to an agent
// (shutdown, sync) when Config.AgentCallTimeout is zero. A healthy agent
// answers these in milliseconds.
const DefaultAgentCallTimeout = 5 * time.Second

func (m *Manager) agentCallTimeout() time.Duration {
	if m.cfg.AgentCallTimeout > 0 {
		return m.cfg.AgentCallTimeout
	}
	return DefaultAgentCallTimeout
}

// workerSlot is the scheduler's worker slot that a lifecycle action holds.
// Waiting on an agent is not work: an action gives its slot back before it
// waits (waitingOnAgent), so that sandboxes whose agents do not answer cannot
// take every slot and hold up other sandboxes' deadlines.
type workerSlot struct {
	once    sync.Once
	release func()
}

// free gives the slot back; only the first call counts.
func (s *workerSlot) free() { s.once.Do(s.release) }

// waitingOnAgent frees the worker slot of the scheduler's action on sandbox
// id, if one acts on it now. The action goes on without a slot: what is
// left after the wait is bounded and short.
func (m *Manager) waitingOnAgent(id string) {
	m.life.mu.Lock()
	s := m.life.busy[id]
	m.life.mu.Unlock()
	if s != nil {
		s.free()
	}
}

// A force stop or a delete must not wait behind a graceful stop for its
// grace period (nor for the agent to answer): it cuts the graceful stop
// short, which then kills the instance at once, and takes the lock after it.

// gracefulStop is a graceful stop under way; cancel cuts it short.
type gracefulStop struct{ cancel context.CancelFunc }

// gracefulStopping registers a graceful stop of id. It returns ctx, which
// cutGracefulStop cancels, and done, which unregisters it.
func (m *Manager) gracefulStopping(ctx context.Context, id string) (_ context.Context, done func()) {
	ctx, cancel := context.WithCancel(ctx)
	g := &gracefulStop{cancel}
	m.mu.Lock()
	m.graceful[id] = g
	m.mu.Unlock()
	return ctx, func() {
		m.mu.Lock()
		if m.graceful[id] == g {
			delete(m.graceful, id)
		}
		m.mu.Unlock()
		cancel()
	}
}

// cutGracefulStop cuts short the graceful stop of idOrName under way, if any.
func (m *Manager) cutGracefulStop(ctx context.Context, idOrName string) {
	sb, err := m.cfg.Store.GetSandbox(ctx, idOrName)
	if err != nil {
		return // the caller's lock reports it
	}
	m.mu.Lock()
	if g := m.graceful[sb.ID]; g != nil {
		g.cancel()
		delete(m.graceful, sb.ID)
	}
	m.mu.Unlock()
}
