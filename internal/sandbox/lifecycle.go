package sandbox

import (
	"context"
	"fmt"
	"github.com/sbxhq/sbx/internal/auth"
	"os"
	"sort"
	"syscall"
	"time"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// StopOptions say how to stop an instance.
type StopOptions struct {
	Grace time.Duration // time between SIGTERM and SIGKILL; default 10 s
	Force bool          // SIGKILL at once
}

// DefaultGrace is the time processes get between SIGTERM and SIGKILL.
const DefaultGrace = 10 * time.Second

// Start starts a new instance of a stopped sandbox over its own filesystem.
// Starting a started sandbox is a no-op.
func (m *Manager) Start(ctx context.Context, idOrName string) (*store.Sandbox, error) {
	ctx = context.WithoutCancel(ctx)
	sb, unlock, err := m.lock(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	defer unlock()
	switch out, err := decide(opStart, sb); out {
	case refuse:
		return nil, err
	case noop:
		return sb, nil
	}
	if err := m.startLocked(ctx, sb, "user"); err != nil { // lazy.go
		return nil, err
	}
	return sb, nil
}

// Stop stops a sandbox's instance: SIGTERM to every process, the grace period,
// then SIGKILL. Its filesystem stays. Stopping a stopped sandbox is a no-op.
func (m *Manager) Stop(ctx context.Context, idOrName string, opt StopOptions) (*store.Sandbox, error) {
	ctx = context.WithoutCancel(ctx)
	if opt.Force {
		m.cutGracefulStop(ctx, idOrName)
	}
	sb, unlock, err := m.lock(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	defer unlock()
	switch out, err := decide(opStop, sb); out {
	case refuse:
		return nil, err
	case noop:
		return sb, nil
	}
	return sb, m.stop(ctx, sb, opt, "user")
}

// stop takes a locked sandbox to "stopped" with reason.
func (m *Manager) stop(ctx context.Context, sb *store.Sandbox, opt StopOptions, reason string) (err error) {
	defer m.observe("stop", reason, time.Now(), &err)
	if err := m.transition(ctx, sb, wire.StateStopping, reason, ""); err != nil {
		return err
	}
	if err := m.stopInstance(ctx, sb, opt); err != nil {
		m.transition(ctx, sb, wire.StateError, "stop-failed", err.Error())
		return err
	}
	return m.transition(ctx, sb, wire.StateStopped, reason, "")
}

// Delete removes a sandbox and everything it owns. Without wait it returns
// once the intent is recorded and finishes in the background.
func (m *Manager) Delete(ctx context.Context, idOrName string, wait bool) (*store.Sandbox, error) {
	ctx = context.WithoutCancel(ctx)
	m.cutGracefulStop(ctx, idOrName)
	sb, unlock, err := m.lock(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	if _, err := decide(opDelete, sb); err != nil {
		unlock()
		return nil, err
	}
	if err := m.refuseIfForked(ctx, sb); err != nil { // lineage.go
		unlock()
		return nil, err
	}
	if err := m.transition(ctx, sb, wire.StateDeleting, "delete", ""); err != nil {
		unlock()
		return nil, err
	}
	snapshot := *sb
	finish := func() error {
		defer unlock()
		return m.finishDelete(ctx, sb)
	}
	if wait {
		return &snapshot, finish()
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		if err := finish(); err != nil {
			m.log.Error("delete sandbox", "id", sb.ID, "err", err)
		}
	}()
	return &snapshot, nil
}

// finishDelete tears down a sandbox already in state "deleting".
func (m *Manager) finishDelete(ctx context.Context, sb *store.Sandbox) error {
	if err := m.stopInstance(ctx, sb, StopOptions{Force: true}); err != nil {
		m.transition(ctx, sb, wire.StateError, "delete-failed", err.Error())
		return err
	}
	if err := m.deleteArchive(ctx, sb); err != nil { // archive.go
		m.transition(ctx, sb, wire.StateError, "delete-failed", err.Error())
		return err
	}
	if err := runtime.UnmountRunDir(m.dirsOf(sb.ID).run); err != nil { // a capped tmpfs
		m.transition(ctx, sb, wire.StateError, "delete-failed", err.Error())
		return errdefs.Internal(err, "remove files of sandbox %s", sb.ID)
	}
	if err := os.RemoveAll(m.dirsOf(sb.ID).root); err != nil {
		m.transition(ctx, sb, wire.StateError, "delete-failed", err.Error())
		return errdefs.Internal(err, "remove files of sandbox %s", sb.ID)
	}
	if err := m.cfg.Store.DeleteSandbox(ctx, sb.ID); err != nil {
		return err
	}
	m.recordDeleted(ctx, sb) // events.go
	return nil
}

// removeAll undoes a failed create: instance, files and record.
func (m *Manager) removeAll(ctx context.Context, sb *store.Sandbox) {
	if err := m.stopInstance(ctx, sb, StopOptions{Force: true}); err != nil {
		m.log.Error("roll back create", "id", sb.ID, "err", err)
	}
	runtime.UnmountRunDir(m.dirsOf(sb.ID).run)
	os.RemoveAll(m.dirsOf(sb.ID).root)
	if err := m.cfg.Store.DeleteSandbox(ctx, sb.ID); err != nil {
		m.log.Error("roll back create", "id", sb.ID, "err", err)
	}
}

// lock finds a sandbox and takes its lock. The record is re-read under the
// lock so the caller sees the state the previous holder left.
func (m *Manager) lock(ctx context.Context, idOrName string) (*store.Sandbox, func(), error) {
	sb, err := m.cfg.Store.GetSandbox(ctx, idOrName)
	if err != nil {
		return nil, nil, err
	}
	unlock := m.locks.Lock(sb.ID)
	sb, err = m.cfg.Store.GetSandbox(ctx, sb.ID)
	if err != nil {
		unlock()
		return nil, nil, err
	}
	return sb, unlock, nil
}

// startInstance mounts the rootfs, starts the container and waits for its
// agent. On error everything it made is undone.
func (m *Manager) startInstance(ctx context.Context, sb *store.Sandbox) (err error) {
	d := m.dirsOf(sb.ID)
	for _, dir := range []string{d.root, d.run, d.bundle} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return errdefs.Internal(err, "create sandbox directory")
		}
	}
	// A mount left by a crash would hide the fresh one.
	if err := m.cfg.Rootfs.Unmount(d.rootfs); err != nil {
		return errdefs.Internal(err, "clear old rootfs mount of %s", sb.ID)
	}
	if err := m.pullLayers(ctx, sb.Spec.Layers); err != nil { // layerblobs.go: archived or snapshotted elsewhere
		return err
	}
	upper, work, err := m.diskDirs(sb) // on the sandbox's own disk if it has one
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			m.stopInstance(ctx, sb, StopOptions{Force: true})
		}
	}()
	if err := m.cfg.Rootfs.Mount(m.cfg.Images.LayerDirs(sb.Spec.Layers), upper, work, d.rootfs); err != nil {
		return errdefs.Internal(err, "mount root filesystem of %s", sb.ID)
	}
	hostname := sb.Name
	if hostname == "" {
		hostname = sb.ID
	}
	caBundle := m.caBundle(sb.Spec) // defaults.go
	inst := &runtime.Instance{
		ID:          sb.ID,
		BundleDir:   d.bundle,
		RootfsDir:   d.rootfs,
		AgentBinary: m.cfg.AgentBinary,
		RunDir:      d.run,
		LogPath:     d.log,
		Hostname:    hostname,
		Env:         withCAEnv(instanceEnv(sb.Spec), caBundle),
		CABundle:    caBundle,
		Workdir:     sb.Spec.Workdir,
		CPU:         sb.Spec.CPU,
		MemoryMiB:   sb.Spec.MemoryMiB,
		PidsLimit:   sb.Spec.PidsLimit,
	}
	if inst.Volumes, err = m.volumeMounts(sb); err != nil { // volumes.go
		return err
	}
	buckets, err := m.mountBuckets(sb) // volumes.go; stopInstance unmounts
	if err != nil {
		return err
	}
	inst.Volumes = append(inst.Volumes, buckets...)
	if err := m.setupNetwork(ctx, sb, inst); err != nil {
		return err
	}
	st, err := m.runInstance(ctx, sb, inst) // by class; restores saved memory (class.go)
	if err != nil {
		return err
	}
	client := agentapi.NewClient(d.run)
	readyCtx, cancel := context.WithTimeout(ctx, m.cfg.ReadyTimeout)
	defer cancel()
	waitForSocket(readyCtx, d.run, min(m.cfg.ReadyTimeout/2, 5*time.Second)) // agentready.go
	if err := client.WaitReady(readyCtx); err != nil {
		return errdefs.Unavailable(wire.CodeAgentNotReady, "the agent of sandbox %s did not answer within %s (see %s): %v", sb.ID, m.cfg.ReadyTimeout, d.log, err)
	}
	return m.attach(sb.ID, st.Pid, client)
}

// attach remembers a running instance and watches for its exit. The exit
// is handled on the watch's own goroutine: no second goroutine per sandbox
// waits for it.
func (m *Manager) attach(id string, pid int, client *agentapi.Client) error {
	inst := &instance{pid: pid, agent: client}
	attached := make(chan struct{})
	m.wg.Add(1)
	exited, err := runtime.WatchExitFunc(m.ctx, pid, func(exited bool) {
		defer m.wg.Done()
		if exited {
			<-attached // inst is in m.instances
			m.onExit(id, inst)
		}
	})
	if err != nil {
		m.wg.Done()
		return errdefs.Internal(err, "watch instance of %s", id)
	}
	inst.exited = exited
	m.mu.Lock()
	m.instances[id] = inst
	m.mu.Unlock()
	close(attached)
	return nil
}

// onExit handles an instance that exited while its sandbox was started: the
// sandbox stops with reason "crash". Exits caused by stop or delete find the
// instance already detached and do nothing.
func (m *Manager) onExit(id string, inst *instance) {
	ctx := auth.System(m.ctx, "instance exited")
	unlock := m.locks.Lock(id)
	defer unlock()
	m.mu.Lock()
	current := m.instances[id] == inst
	m.mu.Unlock()
	if !current {
		return
	}
	sb, err := m.cfg.Store.GetSandbox(ctx, id)
	if err != nil {
		m.log.Error("instance exited", "id", id, "err", err)
		return
	}
	// Before stopInstance: it removes the cgroup that says whether it was an OOM.
	reason, msg := m.exitReason(sb, "the instance exited unexpectedly") // exitreason.go: main-exit, oom or crash
	m.log.Warn("instance exited", "id", id, "pid", inst.pid, "reason", reason)
	if err := m.stopInstance(ctx, sb, StopOptions{Force: true}); err != nil {
		m.transition(ctx, sb, wire.StateError, reason, err.Error())
		return
	}
	m.transition(ctx, sb, wire.StateStopped, reason, msg)
}

// stopInstance ends the instance, if any, and releases its runtime state and
// rootfs mount. It is idempotent and safe on a sandbox with no instance.
func (m *Manager) stopInstance(ctx context.Context, sb *store.Sandbox, opt StopOptions) error {
	m.mu.Lock()
	inst := m.instances[sb.ID]
	delete(m.instances, sb.ID)
	m.mu.Unlock()

	if inst != nil && !opt.Force {
		m.shutdownGracefully(ctx, sb.ID, inst, opt.Grace)
	}
	if err := m.runtimeOf(sb).Kill(ctx, sb.ID, syscall.SIGKILL); err != nil && !errdefs.Is(err, errdefs.KindNotFound) {
		m.log.Warn("kill instance", "id", sb.ID, "err", err)
	}
	if err := m.runtimeOf(sb).Delete(ctx, sb.ID); err != nil {
		return fmt.Errorf("delete instance of %s: %w", sb.ID, err)
	}
	if err := m.teardownNetwork(ctx, sb.ID); err != nil {
		return err
	}
	if err := m.cfg.Rootfs.Unmount(m.dirsOf(sb.ID).rootfs); err != nil {
		return fmt.Errorf("unmount root filesystem of %s: %w", sb.ID, err)
	}
	if err := m.unmountDisk(sb.ID); err != nil {
		return fmt.Errorf("unmount disk of %s: %w", sb.ID, err)
	}
	if err := m.unmountBuckets(sb.ID); err != nil { // volumes.go
		return err
	}
	return nil
}

// shutdownGracefully asks the agent to stop every process (SIGTERM, grace,
// SIGKILL) and exit, and waits for it a little longer than grace. An agent
// that does not accept within the agent call timeout is not waited for: the
// caller kills the instance through the runtime (see agentcall.go).
func (m *Manager) shutdownGracefully(ctx context.Context, id string, inst *instance, grace time.Duration) {
	if grace == 0 {
		grace = DefaultGrace
	}
	m.waitingOnAgent(id)
	ctx, done := m.gracefulStopping(ctx, id) // a force stop or delete cancels ctx
	defer done()
	callCtx, cancel := context.WithTimeout(ctx, m.agentCallTimeout())
	err := inst.agent.Shutdown(callCtx, grace)
	cancel()
	if err != nil {
		m.log.Warn("the agent did not accept the shutdown; killing the instance", "id", id, "err", err)
		return
	}
	t := time.NewTimer(grace + 2*time.Second)
	defer t.Stop()
	select {
	case <-inst.exited:
	case <-ctx.Done():
		m.log.Info("a force stop or delete cut the grace period short", "id", id)
	case <-t.C:
		m.log.Warn("the agent did not exit within the grace period; killing the instance", "id", id, "grace", grace)
	}
}

// instanceEnv is the agent's environment: the image's, then the sandbox's.
func instanceEnv(spec store.Spec) []string {
	env := map[string]string{
		"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME": "/root",
	}
	for _, kv := range spec.ImageConfig.Env {
		for i := 0; i < len(kv); i++ {
			if kv[i] == '=' {
				env[kv[:i]] = kv[i+1:]
				break
			}
		}
	}
	for k, v := range spec.Env {
		env[k] = v
	}
	env["SBX_WORKDIR"] = spec.Workdir
	if len(spec.Entrypoint) > 0 { // the agent supervises it (agent/mainproc.go)
		env[agentapi.MainEnv] = agentapi.MainEnvValue(agentapi.MainSpec{Cmd: spec.Entrypoint, Restart: spec.RestartPolicy})
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
