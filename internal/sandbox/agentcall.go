package sandbox

import (
	"context"
	"sync"
	"time"
)

// Code inside a sandbox is hostile (DESIGN invariant 9): it can stop or
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

type slotKey struct{}

// withWorkerSlot returns ctx carrying a slot that release frees.
func withWorkerSlot(ctx context.Context, release func()) (context.Context, *workerSlot) {
	s := &workerSlot{release: release}
	return context.WithValue(ctx, slotKey{}, s), s
}

// free gives the slot back; only the first call counts.
func (s *workerSlot) free() { s.once.Do(s.release) }

// waitingOnAgent frees the worker slot ctx carries, if any. The action goes
// on without a slot: what is left after the wait is bounded and short.
func waitingOnAgent(ctx context.Context) {
	if s, ok := ctx.Value(slotKey{}).(*workerSlot); ok {
		s.free()
	}
}
