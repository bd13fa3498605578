package sandbox

import (
	"context"
	"github.com/sbxhq/sbx/internal/auth"
	"os"
	"path/filepath"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Reconcile converges the store and the runtime after a daemon start:
// running instances are reattached, operations cut short by a crash are
// finished or rolled back, and runtime state or files no record owns are
// removed. It runs before the API serves requests.
func (m *Manager) Reconcile(ctx context.Context) error {
	ctx = auth.System(ctx, "reconcile")
	all, err := m.cfg.Store.ListSandboxes(ctx, store.Filter{})
	if err != nil {
		return err
	}
	known := map[string]bool{}
	for _, sb := range all {
		known[sb.ID] = true
		unlock := m.locks.Lock(sb.ID)
		was := sb.State
		err := m.reconcileOne(ctx, sb)
		unlock()
		if err != nil {
			m.log.Error("reconcile sandbox", "id", sb.ID, "err", err)
		} else {
			m.log.Info("reconciled sandbox", "id", sb.ID, "was", was, "now", m.reconciledState(ctx, sb))
		}
	}

	instances, err := m.listInstances(ctx) // of every class (class.go)
	if err != nil {
		return err
	}
	for _, orphan := range instances {
		if !known[orphan.ID] {
			m.log.Warn("removing instance with no sandbox record", "id", orphan.ID)
			if err := m.stopInstance(ctx, orphan, StopOptions{Force: true}); err != nil {
				m.log.Error("remove orphan instance", "id", orphan.ID, "err", err)
			}
		}
	}
	entries, _ := os.ReadDir(filepath.Join(m.cfg.DataDir, "sandboxes"))
	for _, e := range entries {
		if !known[e.Name()] {
			orphan := &store.Sandbox{ID: e.Name()}
			if err := m.stopInstance(ctx, orphan, StopOptions{Force: true}); err == nil {
				os.RemoveAll(filepath.Join(m.cfg.DataDir, "sandboxes", e.Name()))
			}
		}
	}
	m.startPolicies(ctx) // scheduler.go: deadlines now that store and runtime agree
	return nil
}

// reconciledState names where reconcile left sb: its state, or "removed"
// when it rolled back a create or finished a delete.
func (m *Manager) reconciledState(ctx context.Context, sb *store.Sandbox) string {
	if _, err := m.cfg.Store.GetSandbox(ctx, sb.ID); errdefs.Is(err, errdefs.KindNotFound) {
		return "removed"
	}
	return string(sb.State)
}

func (m *Manager) reconcileOne(ctx context.Context, sb *store.Sandbox) error {
	switch sb.State {
	case wire.StateCreating:
		// The caller never got an answer; roll the create back.
		m.removeAll(ctx, sb)
		return nil
	case wire.StateDeleting:
		return m.finishDelete(ctx, sb)
	case wire.StateStopping:
		return m.stop(ctx, sb, StopOptions{Force: true}, "reconcile")
	case wire.StateStarted, wire.StateStarting:
		if m.reattach(ctx, sb) {
			if sb.State == wire.StateStarting {
				return m.transition(ctx, sb, wire.StateStarted, "reconcile", "")
			}
			return nil
		}
		reason, msg := m.exitReason(sb, "the instance was gone when the daemon started") // before its cgroup goes
		if err := m.stopInstance(ctx, sb, StopOptions{Force: true}); err != nil {
			return m.transition(ctx, sb, wire.StateError, "reconcile", err.Error())
		}
		return m.transition(ctx, sb, wire.StateStopped, reason, msg)
	case wire.StatePausing, wire.StatePaused, wire.StateResuming:
		return m.reconcilePaused(ctx, sb) // pause.go
	case wire.StateArchiving, wire.StateArchived, wire.StateRestoring:
		return m.reconcileArchive(ctx, sb) // archive.go
	default: // stopped, error: make sure nothing runs or stays mounted
		return m.stopInstance(ctx, sb, StopOptions{Force: true})
	}
}

// reattach adopts a running instance whose agent answers.
func (m *Manager) reattach(ctx context.Context, sb *store.Sandbox) bool {
	st, err := m.runtimeOf(sb).State(ctx, sb.ID)
	if err != nil || !st.Running {
		if err != nil && !errdefs.Is(err, errdefs.KindNotFound) {
			m.log.Warn("runtime state", "id", sb.ID, "err", err)
		}
		return false
	}
	client := agentapi.NewClient(m.dirsOf(sb.ID).run)
	// A busy agent may be slow to answer; a hung one must not stall start-up.
	healthCtx, cancel := context.WithTimeout(ctx, m.cfg.ReadyTimeout)
	defer cancel()
	if err := client.WaitReady(healthCtx); err != nil {
		m.log.Warn("instance runs but its agent does not answer", "id", sb.ID, "err", err)
		return false
	}
	if m.attach(sb.ID, st.Pid, client) != nil {
		return false
	}
	m.restoreNetwork(ctx, sb)
	return true
}
