package sandbox

import (
	"context"
	"github.com/sbxhq/sbx/internal/auth"
	"time"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// DefaultLazyStartTimeout bounds how long a toolbox call waits for the
// start (and restore) of a stopped or archived sandbox, or the resume of a
// paused one.
const DefaultLazyStartTimeout = 60 * time.Second

// startCall is one lazy start that every caller needing it shares.
type startCall struct {
	done chan struct{}
	err  error
}

// Agent returns the agent client of a sandbox for a toolbox call, starting
// the sandbox first if it is stopped or archived (lazy start), or resuming
// it if it is paused. Concurrent
// callers share one start. If the start does not finish within the lazy
// start timeout the call fails with SANDBOX_UNAVAILABLE (503, Retry-After)
// and the caller must not run its operation; the start goes on.
func (m *Manager) Agent(ctx context.Context, idOrName string) (*agentapi.Client, *store.Sandbox, error) {
	for attempt := 0; ; attempt++ {
		sb, err := m.cfg.Store.GetSandbox(ctx, idOrName)
		if err != nil {
			return nil, nil, err
		}
		if inst := m.servingInstance(sb); inst != nil {
			return inst.agent, sb, nil
		}
		// Anything but a refusal goes through one lazy start, which decides
		// again under the lock: a start or resume, or, for a sandbox in a
		// busy state or draining for idleness, whatever its end requires.
		if out, err := decide(opToolbox, sb); out == refuse {
			return nil, sb, err
		}
		if attempt > 0 {
			return nil, sb, ErrNotRunning(sb)
		}
		if err := m.ensureStarted(ctx, sb); err != nil {
			return nil, sb, err
		}
	}
}

// AgentIfRunning returns the agent client of a sandbox's running instance
// for a lookup (a list or get of processes, sessions, terminals, contexts):
// it never starts, resumes or waits for the sandbox. Without an instance it
// fails with NOT_IN_CURRENT_INSTANCE (404); a paused sandbox answers
// SANDBOX_PAUSED, a busy one SANDBOX_UNAVAILABLE (see opLookup).
func (m *Manager) AgentIfRunning(ctx context.Context, idOrName string) (*agentapi.Client, *store.Sandbox, error) {
	sb, err := m.cfg.Store.GetSandbox(ctx, idOrName)
	if err != nil {
		return nil, nil, err
	}
	if _, err := decide(opLookup, sb); err != nil {
		return nil, sb, err
	}
	if inst := m.servingInstance(sb); inst != nil {
		return inst.agent, sb, nil
	}
	// Started, but draining for idleness or not attached (yet or any more).
	return nil, sb, refuseBusy.err(opLookup, sb)
}

// ensureStarted starts sb unless a start is already under way, and waits
// for it up to the lazy start timeout.
func (m *Manager) ensureStarted(ctx context.Context, sb *store.Sandbox) error {
	m.life.mu.Lock()
	m.life.init()
	call := m.life.starts[sb.ID]
	if call == nil {
		call = &startCall{done: make(chan struct{})}
		m.life.starts[sb.ID] = call
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			// The start outlives impatient callers: the next call finds it done.
			call.err = m.lazyStart(sb.ID)
			m.life.mu.Lock()
			delete(m.life.starts, sb.ID)
			m.life.mu.Unlock()
			close(call.done)
		}()
	}
	m.life.mu.Unlock()

	timeout := m.cfg.LazyStartTimeout
	if timeout <= 0 {
		timeout = DefaultLazyStartTimeout
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-call.done:
		return call.err
	case <-t.C:
		return errdefs.Unavailable(wire.CodeSandboxUnavailable,
			"sandbox %s is still starting after %s; the operation did not run: retry shortly", refOf(sb), timeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// lazyStart starts or resumes a sandbox for a toolbox call, after whatever
// operation holds its lock now (a stop, an archive, a pause) has finished.
func (m *Manager) lazyStart(id string) error {
	ctx := auth.System(m.ctx, "lazy start")
	sb, unlock, err := m.lock(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	// Under the lock nothing else is under way: a busy state is one a crash
	// left, which Reconcile settles.
	switch out, _ := decide(opToolbox, sb); out {
	case run:
		if m.hasInstance(sb.ID) {
			return nil
		}
	case needsStart:
		return m.startLocked(ctx, sb, "lazy")
	case needsResume:
		return m.resumeLocked(ctx, sb, "lazy")
	}
	return ErrNotRunning(sb)
}

// startLocked starts a locked sandbox that is stopped, in error or
// archived, recording reason ("user", "lazy") with each state.
func (m *Manager) startLocked(ctx context.Context, sb *store.Sandbox, reason string) (err error) {
	defer m.observe("start", reason, time.Now(), &err)
	if err := m.cfg.Disk.Check("start a sandbox"); err != nil {
		return err
	}
	release, err := m.reserveStart(ctx, sb) // quota.go: the team's maxRunning
	if err != nil {
		return err
	}
	if sb.State == wire.StateArchived {
		release()
		if err := m.restoreLocked(ctx, sb, reason); err != nil {
			return err
		}
	} else if err := m.transition(ctx, sb, wire.StateStarting, reason, ""); err != nil {
		release()
		return err
	}
	release()
	m.clearExitMarker(sb.ID)
	if err := m.startInstance(ctx, sb); err != nil {
		m.transition(ctx, sb, wire.StateError, "start-failed", err.Error())
		return err
	}
	return m.transition(ctx, sb, wire.StateStarted, reason, "")
}

func refOf(sb *store.Sandbox) string {
	if sb.Name != "" {
		return sb.Name
	}
	return sb.ID
}

// LazyPortWait bounds how long EnsureServing waits, after starting a
// sandbox, for its server to listen.
const LazyPortWait = 15 * time.Second

// EnsureServing readies a sandbox to serve a request on port (a preview):
// a sandbox without a running instance is started or resumed as for a
// toolbox call (see Agent), and its server then gets up to LazyPortWait to
// listen on port. A server that does not listen by then is not an error:
// the request goes on and its caller sees the connection refused.
func (m *Manager) EnsureServing(ctx context.Context, idOrName string, port int) (*store.Sandbox, error) {
	sb, err := m.cfg.Store.GetSandbox(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	if m.servingInstance(sb) != nil {
		return sb, nil
	}
	if _, sb, err = m.Agent(ctx, sb.ID); err != nil {
		return nil, err
	}
	if m.cfg.Network != nil {
		m.cfg.Network.WaitPort(ctx, sb.ID, port, LazyPortWait)
	}
	return sb, nil
}

// servingInstance returns the running instance of sb, or nil if it has
// none or it is being stopped or paused for idleness.
func (m *Manager) servingInstance(sb *store.Sandbox) *instance {
	m.mu.Lock()
	inst := m.instances[sb.ID]
	m.mu.Unlock()
	if sb.State != wire.StateStarted || m.life.isDraining(sb.ID) {
		return nil
	}
	return inst
}
