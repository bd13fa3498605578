package sandbox

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Adoption: a create takes a started instance from a warm pool (pool.go)
// and makes it the new sandbox without a restart. The instance keeps its
// id, address, rootfs and agent; the create's name becomes its hostname,
// its env the agent's, its egress policy the firewall's, its labels and
// lifecycle policy the record's. What a process inside then sees is what
// it would see in a fresh sandbox of the same spec (integration/pool_test.go).

// adoptingMarker, in a sandbox's directory, marks a pool instance under
// adoption (adoptInstance).
const adoptingMarker = "adopting"

// errPoolInstanceUnfit is an instance that cannot be adopted after all
// (crashed, made from an older image): it is deleted and the next one tried.
var errPoolInstanceUnfit = errors.New("pool instance unfit")

// withPoolTemplate fills the fields a create that names a pool leaves out
// from the pool's template, and refuses fields that contradict it.
func (m *Manager) withPoolTemplate(ctx context.Context, req wire.CreateSandboxRequest) (wire.CreateSandboxRequest, error) {
	m.pools.mu.Lock()
	wp := m.pools.byKey[poolKey{callerTeam(ctx), req.Pool}]
	var t wire.PoolTemplate
	if wp != nil {
		t = wp.rec.Spec.Template
	}
	m.pools.mu.Unlock()
	if wp == nil {
		return req, store.PoolNotFound(req.Pool)
	}
	var conflicts []string
	fillField(&conflicts, "image", &req.Image, t.Image)
	fillField(&conflicts, "class", &req.Class, t.Class)
	fillField(&conflicts, "workdir", &req.Workdir, t.Workdir)
	fillField(&conflicts, "network", &req.Network, t.Network)
	fillField(&conflicts, "memoryMiB", &req.MemoryMiB, t.MemoryMiB)
	fillField(&conflicts, "pidsLimit", &req.PidsLimit, t.PidsLimit)
	fillField(&conflicts, "diskMiB", &req.DiskMiB, t.DiskMiB)
	fillField(&conflicts, "cpu", &req.CPU, t.CPU)
	if req.Egress == nil {
		req.Egress = t.Egress
	}
	env := maps.Clone(t.Env)
	if env == nil && req.Env != nil {
		env = map[string]string{}
	}
	maps.Copy(env, req.Env)
	req.Env = env
	if len(conflicts) > 0 {
		return req, errdefs.Invalid(wire.CodeInvalidPool, "the create names pool %q but sets %s otherwise than its template; leave them out", req.Pool, strings.Join(conflicts, ", "))
	}
	return req, nil
}

// fillField sets a create's field left out (zero) to the template's want,
// and names it in conflicts when both are set and differ.
func fillField[T comparable](conflicts *[]string, field string, have *T, want T) {
	var zero T
	if *have == zero {
		*have = want
	} else if want != zero && *have != want {
		*conflicts = append(*conflicts, field)
	}
}

// adopt makes the new sandbox from a pool instance if a pool of the
// caller's team matches spec. handled is false when no instance was
// taken: the caller then starts one cold.
func (m *Manager) adopt(ctx context.Context, req wire.CreateSandboxRequest, spec store.Spec) (sb *store.Sandbox, handled bool, err error) {
	team := callerTeam(ctx)
	for tries := 0; tries < 3; tries++ {
		id := m.takeReady(team, req, spec)
		if id == "" {
			return nil, false, nil
		}
		sb, err := m.adoptInstance(ctx, id, req, spec)
		switch {
		case err == nil:
			return sb, true, nil
		case errdefs.Is(err, errdefs.KindConflict) || errdefs.Is(err, errdefs.KindInvalid):
			// The create's own fault (a taken name): the instance goes back.
			m.putBack(team, id)
			return nil, true, err
		}
		m.log.Warn("pool instance not adoptable; deleting it", "id", id, "err", err)
		m.deletePoolInstances([]string{id})
	}
	return nil, false, nil
}

// takeReady takes the oldest ready instance of the pool the create names,
// or else of the first of the team's pools whose template matches spec.
// "" if none; a matching pool that is empty counts a miss.
func (m *Manager) takeReady(team string, req wire.CreateSandboxRequest, spec store.Spec) string {
	m.pools.mu.Lock()
	defer m.pools.mu.Unlock()
	var matched *warmPool
	for k, wp := range m.pools.byKey {
		if k.team != team || (req.Pool != "" && k.name != req.Pool) || !poolMatches(wp.spec, spec) {
			continue
		}
		// A gvisor instance's hostname lives in its sandbox kernel, out of
		// the host's reach: only a create without a name (hostname = id)
		// can adopt one.
		if classOf(spec) == ClassGVisor && req.Name != "" {
			continue
		}
		matched = wp
		if len(wp.ready) > 0 {
			id := wp.ready[0]
			wp.ready = wp.ready[1:]
			wp.adopted++
			wp.recent = append(wp.recent, time.Now())
			m.pools.poke()
			return id
		}
	}
	if matched != nil {
		matched.missed++
		matched.recent = append(matched.recent, time.Now()) // demand: fill past min
		m.pools.poke()
	}
	return ""
}

// putBack returns an instance an adoption did not use to its pool.
func (m *Manager) putBack(team, id string) {
	ctx := auth.System(m.ctx, "return an instance to its pool")
	sb, err := m.cfg.Store.GetSandbox(ctx, id)
	if err != nil || sb.Pool == "" {
		return
	}
	m.pools.mu.Lock()
	defer m.pools.mu.Unlock()
	if wp := m.pools.byKey[poolKey{team, sb.Pool}]; wp != nil {
		wp.ready = append([]string{id}, wp.ready...)
		wp.adopted--
	}
}

// adoptInstance turns the pool instance id into the sandbox the create
// asks for. On error the instance is either untouched (a taken name: it
// goes back to its pool) or deleted.
func (m *Manager) adoptInstance(ctx context.Context, id string, req wire.CreateSandboxRequest, spec store.Spec) (_ *store.Sandbox, err error) {
	defer m.observe("adopt", "user", time.Now(), &err)
	ictx := auth.System(ctx, "adopt a pool instance") // a request's lookups never find pool instances
	sb, unlock, err := m.lock(ictx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if _, err := decide(opAdopt, sb); err != nil || sb.Pool == "" || !poolMatches(sb.Spec, spec) {
		return nil, fmt.Errorf("%w: %s is %s (pool %q)", errPoolInstanceUnfit, id, sb.State, sb.Pool)
	}
	m.mu.Lock()
	inst := m.instances[id]
	m.mu.Unlock()
	if inst == nil {
		return nil, fmt.Errorf("%w: %s has no instance attached", errPoolInstanceUnfit, id)
	}
	// A taken name is refused before the instance is touched (Create holds
	// the name's lock, so no other create takes it meanwhile).
	if req.Name != "" {
		if other, err := m.cfg.Store.GetSandbox(ictx, req.Name); err == nil && other.Name == req.Name && other.Team == sb.Team {
			return nil, errdefs.Conflict(wire.CodeNameTaken, "a sandbox named %q already exists; pick another name or use PUT /v1/sandboxes/{name} to get it", req.Name)
		}
	}
	// One write makes it the new sandbox, after the instance has become
	// it: a second, earlier write of the intent would cost a synced commit
	// on the warm path. The marker file stands in for the intent: a daemon
	// that crashed while it exists finds an instance that may no longer
	// look like its pool's, and deletes it (StartPools).
	marker := filepath.Join(m.dirsOf(id).root, adoptingMarker)
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		return nil, fmt.Errorf("%w: %v", errPoolInstanceUnfit, err)
	}
	defer os.Remove(marker)
	old := sb.Spec
	sb.Pool, sb.Name, sb.Spec, sb.Reason, sb.CreatedAt = "", req.Name, spec, "create", time.Now().UTC()
	if err := m.becomeFresh(ictx, sb, inst, old); err != nil {
		m.removeAll(ictx, sb)
		return nil, err
	}
	if err := m.transition(ictx, sb, wire.StateStarted, "create", ""); err != nil {
		m.removeAll(ictx, sb)
		return nil, err
	}
	return sb, nil
}

// becomeFresh gives a running pool instance, whose spec was old, what a
// fresh instance of sb would have: hostname, environment, egress rules.
func (m *Manager) becomeFresh(ctx context.Context, sb *store.Sandbox, inst *instance, old store.Spec) error {
	if sb.Name != "" { // a fresh instance's hostname is its name, else its id (as now)
		if err := setHostname(inst.pid, sb.Name); err != nil {
			return fmt.Errorf("set hostname of %s: %w", sb.ID, err)
		}
	}
	if change := envChange(instanceEnv(old), instanceEnv(sb.Spec)); len(change) > 0 {
		callCtx, cancel := context.WithTimeout(ctx, m.agentCallTimeout())
		err := inst.agent.SetEnv(callCtx, change)
		cancel()
		if err != nil {
			return fmt.Errorf("set environment of %s: %w", sb.ID, err)
		}
	}
	if m.cfg.Network != nil && sb.Spec.Network == wire.NetworkBridge && !reflect.DeepEqual(old.Egress, sb.Spec.Egress) {
		if err := m.cfg.Network.SetEgress(ctx, sb); err != nil {
			return err
		}
	}
	return nil
}

// envChange is what turns environment from (KEY=VALUE lines) into to:
// the variables to set, and nil for those to unset.
func envChange(from, to []string) map[string]*string {
	parse := func(env []string) map[string]string {
		out := map[string]string{}
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			out[k] = v
		}
		return out
	}
	a, b := parse(from), parse(to)
	change := map[string]*string{}
	for k, v := range b {
		if old, ok := a[k]; !ok || old != v {
			change[k] = &v
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			change[k] = nil
		}
	}
	return change
}
