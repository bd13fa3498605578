package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Upgrades in place. The daemon copies its own binary to
// <data>/agent/sbx-<content hash> and every new instance bind-mounts that
// copy as its agent. A new sbx binary thus adds a second file there, and:
//
//   - a running instance keeps the agent it was started with (its bundle's
//     config.json names it) until it stops; the new daemon talks to it if
//     its protocol version is supported (agentapi/version.go), and
//     restarts it with the current agent otherwise (SettleAgents);
//   - a memory image (a paused class-gvisor sandbox, a memory snapshot, a
//     fork's copy) records the agent its processes were running (the file
//     agentRecord in the image's directory), and restores with that very
//     binary: the restored agent is the old agent's memory, and its text
//     must match the file mounted under it;
//   - an agent binary that no running instance and no memory image uses
//     any more is deleted (SettleAgents, at daemon start).

// agentRecord, in a memory image's directory, names the agent binary (a
// file name under <data>/agent) that the image's processes run.
const agentRecord = "sbx-agent"

// agentReason is the reason of the restart of a sandbox whose agent speaks
// a protocol version this daemon cannot.
const agentReason = "agent-upgrade"

var agentFileRe = regexp.MustCompile(`^sbx-[0-9a-f]{16}$`)

func (m *Manager) agentDir() string { return filepath.Join(m.cfg.DataDir, "agent") }

// agentFile is the host path of the agent binary named name, "" if name is
// no agent file name or the file is gone.
func (m *Manager) agentFile(name string) string {
	if !agentFileRe.MatchString(name) {
		return ""
	}
	path := filepath.Join(m.agentDir(), name)
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return path
}

// instanceAgent is the agent binary that sandbox id's current (or last)
// instance was started with, from its bundle's config.json; "" if unknown.
func (m *Manager) instanceAgent(id string) string {
	b, err := os.ReadFile(filepath.Join(m.dirsOf(id).bundle, "config.json"))
	if err != nil {
		return ""
	}
	var spec struct {
		Mounts []struct{ Destination, Source string }
	}
	if json.Unmarshal(b, &spec) != nil {
		return ""
	}
	for _, mnt := range spec.Mounts {
		if mnt.Destination == runtime.AgentPath {
			return mnt.Source
		}
	}
	return ""
}

// recordImageAgent notes in sandbox id's fresh memory image which agent
// its processes run. Call it right after the checkpoint.
func (m *Manager) recordImageAgent(id string) {
	agentBin := m.instanceAgent(id)
	if agentBin == "" {
		agentBin = m.cfg.AgentBinary
	}
	if err := os.WriteFile(filepath.Join(m.checkpointDir(id), agentRecord), []byte(filepath.Base(agentBin)+"\n"), 0o600); err != nil {
		m.log.Warn("record the agent of a memory image", "id", id, "err", err)
	}
}

// imageAgent is the agent binary to restore the memory image in dir of
// sandbox id with: the one the image records; for an image of an older sbx
// that records none, the one the sandbox's last instance ran; else the
// current one.
func (m *Manager) imageAgent(dir, id string) string {
	if b, err := os.ReadFile(filepath.Join(dir, agentRecord)); err == nil {
		name := strings.TrimSuffix(string(b), "\n")
		if path := m.agentFile(name); path != "" {
			return path
		}
		m.log.Warn("the agent binary a memory image needs is gone; restoring with the current one", "id", id, "agent", name)
		return m.cfg.AgentBinary
	}
	if path := m.agentFile(filepath.Base(m.instanceAgent(id))); path != "" {
		return path
	}
	return m.cfg.AgentBinary
}

// SettleAgents runs after Reconcile, before the API serves: every running
// instance whose agent speaks a protocol version this daemon does not is
// restarted with the current agent (event reason "agent-upgrade"), then
// every agent binary that no instance and no memory image uses is deleted.
func (m *Manager) SettleAgents(ctx context.Context) {
	all, err := m.cfg.Store.ListSandboxes(ctx, store.Filter{})
	if err != nil {
		m.log.Error("settle agents", "err", err)
		return
	}
	for _, sb := range all {
		if sb.State == wire.StateStarted {
			m.checkAgentProtocol(ctx, sb.ID)
		}
	}
	m.sweepAgents(ctx)
}

// checkAgentProtocol restarts sandbox id if its agent's protocol is not
// supported.
func (m *Manager) checkAgentProtocol(ctx context.Context, id string) {
	unlock := m.locks.Lock(id)
	defer unlock()
	sb, err := m.cfg.Store.GetSandbox(ctx, id)
	if err != nil || sb.State != wire.StateStarted {
		return
	}
	m.mu.Lock()
	inst := m.instances[id]
	m.mu.Unlock()
	if inst == nil {
		return
	}
	callCtx, cancel := context.WithTimeout(ctx, m.agentCallTimeout())
	hello, err := inst.agent.Hello(callCtx)
	cancel()
	if err != nil {
		m.log.Warn("agent did not say its protocol version", "id", id, "err", err)
		return // the instance's monitor and the next calls deal with it
	}
	v := hello.Version()
	if agentapi.Supported(v) {
		if v != agentapi.ProtocolVersion() {
			m.log.Info("sandbox runs an agent of an older sbx until its next start", "id", id, "protocol", v)
		}
		return
	}
	msg := fmt.Sprintf("its agent speaks protocol version %d and this sbx speaks %d to %d: restarted with the current agent (processes were ended)",
		v, agentapi.MinProtocolVersion, agentapi.ProtocolVersion())
	m.log.Warn("restarting sandbox whose agent this sbx cannot talk to", "id", id, "protocol", v)
	if err := m.transition(ctx, sb, wire.StateStopping, agentReason, msg); err != nil {
		m.log.Error("restart for the agent protocol", "id", id, "err", err)
		return
	}
	if err := m.stopInstance(ctx, sb, StopOptions{Force: true}); err != nil {
		m.transition(ctx, sb, wire.StateError, "stop-failed", err.Error())
		return
	}
	if err := m.transition(ctx, sb, wire.StateStopped, agentReason, msg); err != nil {
		return
	}
	if err := m.startLocked(ctx, sb, agentReason); err != nil { // lazy.go
		m.log.Error("restart for the agent protocol", "id", id, "err", err)
	}
}

// sweepAgents deletes every agent binary but the current one, those of
// sandboxes that may hold an instance (HasInstance) and
// those memory images record.
func (m *Manager) sweepAgents(ctx context.Context) {
	keep := map[string]bool{filepath.Base(m.cfg.AgentBinary): true}
	all, err := m.cfg.Store.ListSandboxes(ctx, store.Filter{})
	if err != nil {
		return // keep everything rather than guess
	}
	for _, sb := range all {
		if HasInstance(sb.State) {
			keep[filepath.Base(m.instanceAgent(sb.ID))] = true
		}
	}
	images, _ := filepath.Glob(filepath.Join(m.cfg.DataDir, "sandboxes", "*", "checkpoint", agentRecord))
	snaps, _ := filepath.Glob(filepath.Join(m.cfg.DataDir, "snapshots", "*", "memory", agentRecord))
	for _, rec := range append(images, snaps...) {
		if b, err := os.ReadFile(rec); err == nil {
			keep[strings.TrimSuffix(string(b), "\n")] = true
		}
	}
	entries, err := os.ReadDir(m.agentDir())
	if err != nil {
		return
	}
	for _, e := range entries {
		if !agentFileRe.MatchString(e.Name()) || keep[e.Name()] {
			continue
		}
		if err := os.Remove(filepath.Join(m.agentDir(), e.Name())); err == nil {
			m.log.Info("deleted an agent binary no sandbox uses", "agent", e.Name())
		}
	}
}
