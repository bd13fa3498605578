package sandbox

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Pause and resume.
//
// Class gvisor: Pause saves every process and all memory to
// sandboxes/<id>/checkpoint and ends the instance, so a paused sandbox holds
// no process, no CPU and no memory on the host; Resume restores the image
// and every process goes on where it was. Class container: Pause freezes
// every process with the cgroup freezer (memory stays resident, CPU drops to
// zero) and Resume thaws them.
//
// States: started → pausing → paused → resuming → started. A toolbox call
// on a paused sandbox resumes it (lazy.go); delete works, stop needs a
// resume first. The lifecycle policy's autoPauseSeconds pauses an idle
// sandbox (policy.go).

// suspendTimeout bounds the wait for the agent to close its socket.
const suspendTimeout = 10 * time.Second

// Pause pauses a started sandbox. Pausing a paused sandbox is a no-op.
func (m *Manager) Pause(ctx context.Context, idOrName string) (*store.Sandbox, error) {
	ctx = context.WithoutCancel(ctx)
	sb, unlock, err := m.lock(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	defer unlock()
	switch out, err := decide(opPause, sb); out {
	case refuse:
		return nil, err
	case noop:
		return sb, nil
	}
	return sb, m.pauseLocked(ctx, sb, "user")
}

// pauseLocked takes a locked, started sandbox to "paused".
func (m *Manager) pauseLocked(ctx context.Context, sb *store.Sandbox, reason string) (err error) {
	defer m.observe("pause", reason, time.Now(), &err)
	if err := m.transition(ctx, sb, wire.StatePausing, reason, ""); err != nil {
		return err
	}
	if classOf(sb.Spec) == ClassGVisor {
		err = m.saveMemory(ctx, sb)
	} else {
		err = m.freeze(ctx, sb)
	}
	if err != nil {
		if m.hasInstance(sb.ID) {
			// Nothing was lost: the instance runs on.
			m.transition(ctx, sb, wire.StateStarted, "pause-failed", err.Error())
			return err
		}
		m.stopInstance(ctx, sb, StopOptions{Force: true})
		m.transition(ctx, sb, wire.StateError, "pause-failed", err.Error())
		return err
	}
	return m.transition(ctx, sb, wire.StatePaused, reason, "")
}

// Resume resumes a paused sandbox. Resuming a started sandbox is a no-op.
func (m *Manager) Resume(ctx context.Context, idOrName string) (*store.Sandbox, error) {
	ctx = context.WithoutCancel(ctx)
	sb, unlock, err := m.lock(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	defer unlock()
	switch out, err := decide(opResume, sb); out {
	case refuse:
		return nil, err
	case noop:
		return sb, nil
	}
	return sb, m.resumeLocked(ctx, sb, "user")
}

// resumeLocked takes a locked, paused sandbox to "started". If that fails
// the sandbox stays paused, its memory image intact, and can be resumed
// again.
func (m *Manager) resumeLocked(ctx context.Context, sb *store.Sandbox, reason string) (err error) {
	defer m.observe("resume", reason, time.Now(), &err)
	if classOf(sb.Spec) == ClassGVisor && !exists(m.checkpointDir(sb.ID)) {
		msg := "the memory image is gone; the sandbox starts afresh with \"sbx start\""
		m.transition(ctx, sb, wire.StateStopped, "resume-failed", msg)
		return errdefs.Conflict(wire.CodeMemoryImageGone, "cannot resume sandbox %s: %s", refOf(sb), msg)
	}
	if err := m.transition(ctx, sb, wire.StateResuming, reason, ""); err != nil {
		return err
	}
	if classOf(sb.Spec) == ClassGVisor {
		err = m.startInstance(ctx, sb) // restores the memory image (runInstance)
	} else {
		err = m.thaw(ctx, sb)
	}
	if err != nil {
		m.transition(ctx, sb, wire.StatePaused, "resume-failed", err.Error())
		return err
	}
	if err := os.RemoveAll(m.checkpointDir(sb.ID)); err != nil {
		m.log.Warn("remove memory image", "id", sb.ID, "err", err)
	}
	return m.transition(ctx, sb, wire.StateStarted, reason, "")
}

func (m *Manager) hasInstance(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.instances[id] != nil
}

// detach forgets the running instance of id, so that its coming exit is not
// taken for a crash.
func (m *Manager) detach(id string) {
	m.mu.Lock()
	inst := m.instances[id]
	delete(m.instances, id)
	m.mu.Unlock()
	if inst != nil {
		inst.agent.Close()
	}
}

func (m *Manager) freezer(sb *store.Sandbox) (runtime.Freezer, error) {
	f, ok := m.runtimeOf(sb).(runtime.Freezer)
	if !ok {
		return nil, errdefs.Unavailable(wire.CodePauseUnsupported, "the runtime of class %s cannot freeze instances", classOf(sb.Spec))
	}
	return f, nil
}

func (m *Manager) freeze(ctx context.Context, sb *store.Sandbox) error {
	f, err := m.freezer(sb)
	if err != nil {
		return err
	}
	return f.Pause(ctx, sb.ID)
}

func (m *Manager) thaw(ctx context.Context, sb *store.Sandbox) error {
	f, err := m.freezer(sb)
	if err != nil {
		return err
	}
	return f.Resume(ctx, sb.ID)
}

func (m *Manager) checkpointer(sb *store.Sandbox) (runtime.Checkpointer, error) {
	cp, ok := m.runtimeOf(sb).(runtime.Checkpointer)
	if !ok || classOf(sb.Spec) != ClassGVisor {
		return nil, errdefs.Invalid(wire.CodeMemoryUnsupported, "sandbox %s is of class %s; saving memory needs class gvisor", refOf(sb), classOf(sb.Spec))
	}
	return cp, nil
}

// saveMemory writes the memory of a started gvisor sandbox to its
// checkpoint directory and releases the instance (runtime state, cgroups,
// mounts, network). If the agent refuses to suspend, the instance runs on;
// any later failure ends it.
func (m *Manager) saveMemory(ctx context.Context, sb *store.Sandbox) error {
	err := m.checkpoint(ctx, sb)
	if err != nil && m.hasInstance(sb.ID) {
		return err // refused: it runs on
	}
	if rerr := m.releaseSaved(ctx, sb); rerr != nil && err == nil {
		// The image is whole; what is left is cleaned up by the next stop,
		// start or daemon start.
		m.log.Warn("release checkpointed instance", "id", sb.ID, "err", rerr)
	}
	return err
}

// checkpoint writes the memory of a started gvisor sandbox to its
// checkpoint directory. Afterwards its processes are gone, but its rootfs,
// disk and network stay until releaseSaved, so the caller can copy the
// upper directory exactly as the image saw it. If the agent refuses to
// suspend, the instance runs on (hasInstance); after any other failure it
// is gone and must be released.
func (m *Manager) checkpoint(ctx context.Context, sb *store.Sandbox) error {
	cp, err := m.checkpointer(sb)
	if err != nil {
		return err
	}
	m.mu.Lock()
	inst := m.instances[sb.ID]
	m.mu.Unlock()
	if inst == nil {
		return ErrNotRunning(sb)
	}
	if err := m.waitConnsClosed(ctx, sb, cp); err != nil { // conns.go
		return err
	}
	if err := m.suspendAgent(ctx, sb); err != nil {
		return err
	}
	m.detach(sb.ID)
	if err := cp.Checkpoint(ctx, sb.ID, m.checkpointDir(sb.ID)); err != nil {
		return err
	}
	m.recordImageAgent(sb.ID) // agentbin.go: the image restores with this agent
	// The saved sandbox takes a second or more to exit (the kernel tears
	// down its address spaces); start that now.
	select {
	case <-inst.exited:
	default:
		syscall.Kill(inst.pid, syscall.SIGKILL)
	}
	return nil
}

// releaseSaved releases what a checkpointed instance left: runtime state,
// cgroups, mounts, network.
func (m *Manager) releaseSaved(ctx context.Context, sb *store.Sandbox) error {
	return m.stopInstance(ctx, sb, StopOptions{Force: true})
}

// suspendAgent asks the agent to close its socket and connections, which
// gVisor cannot save (see agent/suspend.go), and waits until it has.
func (m *Manager) suspendAgent(ctx context.Context, sb *store.Sandbox) error {
	m.mu.Lock()
	inst := m.instances[sb.ID]
	m.mu.Unlock()
	if inst == nil {
		return ErrNotRunning(sb)
	}
	m.waitingOnAgent(sb.ID)
	sctx, cancel := context.WithTimeout(ctx, suspendTimeout)
	defer cancel()
	if err := inst.agent.Suspend(sctx); err != nil {
		if errdefs.CodeOf(err) == wire.CodeCheckpointRefused {
			return errdefs.Conflict(wire.CodeCheckpointRefused, "cannot save the memory of sandbox %s: %s", refOf(sb), errMessage(err))
		}
		// It may have closed its socket after all; wake it either way.
		agentapi.Wake(m.dirsOf(sb.ID).run)
		return err
	}
	return nil
}

// errMessage is the user-facing message of an errdefs error.
func errMessage(err error) string {
	var e *errdefs.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}

// reconcilePaused finishes or rolls back a pause or resume that a daemon
// crash cut short, and reattaches frozen containers.
func (m *Manager) reconcilePaused(ctx context.Context, sb *store.Sandbox) error {
	if classOf(sb.Spec) == ClassGVisor {
		return m.reconcileSavedMemory(ctx, sb)
	}
	st, err := m.runtimeOf(sb).State(ctx, sb.ID)
	if err != nil || !st.Running {
		if err := m.stopInstance(ctx, sb, StopOptions{Force: true}); err != nil {
			return m.transition(ctx, sb, wire.StateError, "reconcile", err.Error())
		}
		return m.transition(ctx, sb, wire.StateStopped, "crash", "the instance was gone when the daemon started")
	}
	if sb.State == wire.StateResuming {
		if err := m.thaw(ctx, sb); err != nil {
			return err
		}
		if !m.reattach(ctx, sb) {
			return m.transition(ctx, sb, wire.StateError, "reconcile", "the resumed instance's agent does not answer")
		}
		return m.transition(ctx, sb, wire.StateStarted, "reconcile", "")
	}
	// pausing or paused: make sure it is frozen; a frozen agent cannot
	// answer, so attach without asking it.
	if err := m.freeze(ctx, sb); err != nil {
		if p, perr := m.freezerPaused(ctx, sb); perr != nil || !p {
			return err
		}
	}
	if err := m.attach(sb.ID, st.Pid, agentapi.NewClient(m.dirsOf(sb.ID).run)); err != nil {
		return err
	}
	if sb.State == wire.StatePausing {
		return m.transition(ctx, sb, wire.StatePaused, "reconcile", "")
	}
	return nil
}

func (m *Manager) freezerPaused(ctx context.Context, sb *store.Sandbox) (bool, error) {
	f, err := m.freezer(sb)
	if err != nil {
		return false, err
	}
	return f.Paused(ctx, sb.ID)
}

// reconcileSavedMemory converges a gvisor sandbox in pausing, paused or
// resuming: a whole memory image means paused; a running instance whose
// agent answers means started; neither means the processes are lost.
func (m *Manager) reconcileSavedMemory(ctx context.Context, sb *store.Sandbox) error {
	image := exists(m.checkpointDir(sb.ID))
	if sb.State != wire.StatePaused {
		// The agent may be suspended; an awake one ignores this.
		agentapi.Wake(m.dirsOf(sb.ID).run)
		if sb.State == wire.StateResuming || !image {
			if m.reattach(ctx, sb) {
				os.RemoveAll(m.checkpointDir(sb.ID))
				return m.transition(ctx, sb, wire.StateStarted, "reconcile", "")
			}
		}
	}
	if err := m.stopInstance(ctx, sb, StopOptions{Force: true}); err != nil {
		return m.transition(ctx, sb, wire.StateError, "reconcile", err.Error())
	}
	if image {
		if sb.State == wire.StatePaused {
			return nil
		}
		return m.transition(ctx, sb, wire.StatePaused, "reconcile", "")
	}
	return m.transition(ctx, sb, wire.StateStopped, "crash", "the processes were lost: the daemon stopped while their memory was being saved")
}
