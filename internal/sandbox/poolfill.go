package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// The refill: one goroutine tops every pool up to its target. Its rate is
// bounded so that a pool never crowds out user creates: one instance per
// pool at a time, poolFillers for all pools together, and a pool whose
// fill failed (a quota, a deleted image) waits poolRetry before the next.
const (
	poolFillers  = 2
	poolRetry    = 10 * time.Second
	poolFillTick = time.Second
)

// StartPools loads the pools, keeps the instances that survived a daemon
// restart (Reconcile reattached them) and deletes the rest, then starts
// the refill. Call it after Reconcile.
func (m *Manager) StartPools(ctx context.Context) error {
	ps, err := m.poolStore()
	if err != nil {
		return nil // a store without pools: nothing to fill
	}
	recs, err := ps.ListPools(ctx)
	if err != nil {
		return err
	}
	all, err := m.cfg.Store.ListSandboxes(ctx, store.Filter{})
	if err != nil {
		return err
	}
	m.pools.mu.Lock()
	for _, rec := range recs {
		// What creates match; a template that no longer resolves (its image
		// deleted) matches nothing until a fill resolves it again.
		spec, err := m.resolvePoolSpec(poolTeamCtx(ctx, rec.Team), rec.Spec.Template)
		if err != nil {
			m.log.Warn("pool template does not resolve", "team", rec.Team, "pool", rec.Name, "err", err)
		}
		m.pools.byKey[poolKey{rec.Team, rec.Name}] = &warmPool{rec: *rec, spec: spec}
	}
	var stale []string
	for _, sb := range all {
		if sb.Pool == "" {
			continue
		}
		wp := m.pools.byKey[poolKey{sb.Team, sb.Pool}]
		m.mu.Lock()
		attached := m.instances[sb.ID] != nil
		m.mu.Unlock()
		_, midAdoption := os.Lstat(filepath.Join(m.dirsOf(sb.ID).root, adoptingMarker))
		if wp == nil || sb.State != wire.StateStarted || !attached || midAdoption == nil {
			stale = append(stale, sb.ID)
			continue
		}
		wp.ready = append(wp.ready, sb.ID)
	}
	m.pools.mu.Unlock()
	for _, id := range stale {
		m.log.Info("deleting a pool instance that did not survive the restart", "id", id)
	}
	m.deletePoolInstances(stale)

	m.wg.Add(1)
	go m.fillPools()
	return nil
}

// fillPools runs the refill until the Manager closes.
func (m *Manager) fillPools() {
	defer m.wg.Done()
	slots := make(chan struct{}, poolFillers)
	tick := time.NewTicker(poolFillTick)
	defer tick.Stop()
	for {
		m.fillRound(slots)
		select {
		case <-m.closed:
			m.pools.fillWG.Wait()
			return
		case <-m.pools.wake:
		case <-tick.C:
		}
	}
}

// fillRound starts one instance for each pool below its target, as far
// as free slots allow, and drops ready instances that crashed.
func (m *Manager) fillRound(slots chan struct{}) {
	now := time.Now()
	var dead []string
	m.pools.mu.Lock()
	for _, wp := range m.pools.byKey {
		kept := wp.ready[:0]
		for _, id := range wp.ready {
			m.mu.Lock()
			alive := m.instances[id] != nil
			m.mu.Unlock()
			if alive {
				kept = append(kept, id)
			} else {
				dead = append(dead, id)
			}
		}
		wp.ready = kept
		if wp.starting > 0 || len(wp.ready) >= wp.target(now) || now.Before(wp.retryAt) {
			continue
		}
		select {
		case slots <- struct{}{}:
		default:
			continue // every slot busy: the next round
		}
		wp.starting++
		m.pools.fillWG.Add(1)
		go func(wp *warmPool, rec store.PoolRecord) {
			defer m.pools.fillWG.Done()
			defer func() { <-slots }()
			id, err := m.startPoolInstance(rec)
			m.pools.mu.Lock()
			wp.starting--
			switch {
			case err != nil:
				wp.retryAt = time.Now().Add(poolRetry)
				m.log.Warn("fill pool", "team", rec.Team, "pool", rec.Name, "err", err)
			case wp.gone: // deleted below
			default:
				wp.ready = append(wp.ready, id)
			}
			gone := wp.gone
			m.pools.mu.Unlock()
			if err == nil && gone {
				m.deletePoolInstances([]string{id})
			}
			m.pools.poke()
		}(wp, wp.rec)
	}
	m.pools.mu.Unlock()
	m.deletePoolInstances(dead)
}

// startPoolInstance makes and starts one instance of the pool rec, through
// the same steps as a create; nothing of it remains on error.
func (m *Manager) startPoolInstance(rec store.PoolRecord) (id string, err error) {
	defer m.observe("pool-fill", "pool", time.Now(), &err)
	ctx := auth.System(m.ctx, "pool fill")
	spec, err := m.resolvePoolSpec(poolTeamCtx(ctx, rec.Team), rec.Spec.Template)
	if err != nil {
		return "", err
	}
	m.pools.mu.Lock()
	if wp := m.pools.byKey[poolKey{rec.Team, rec.Name}]; wp != nil {
		wp.spec = spec // creates match what the pool makes now
	}
	m.pools.mu.Unlock()
	sb := &store.Sandbox{ID: newID(), Team: rec.Team, Pool: rec.Name, State: wire.StateCreating, Reason: "pool", Spec: spec, CreatedAt: time.Now().UTC()}
	unlock := m.locks.Lock(sb.ID)
	defer unlock()
	if err := m.cfg.Store.CreateSandbox(ctx, sb); err != nil {
		return "", err
	}
	if err := m.startInstance(ctx, sb); err != nil {
		m.removeAll(ctx, sb)
		return "", err
	}
	m.warmUp(ctx, sb.ID)
	if err := m.transition(ctx, sb, wire.StateStarted, "pool", ""); err != nil {
		m.removeAll(ctx, sb)
		return "", err
	}
	return sb.ID, nil
}

// poolTeamCtx is ctx as the pool's team sees images: a template's image
// is looked up as a create of that team would.
func poolTeamCtx(ctx context.Context, team string) context.Context {
	return auth.WithPrincipal(ctx, auth.Principal{KeyID: "pool", Team: team})
}

// warmUp runs one command in a pool instance, unseen by anyone: an agent's
// first command costs it a few milliseconds more than the next (its first
// fork and exec, pages of the command), and that first one would otherwise
// be the adopting caller's. Its outcome does not matter: an image without
// true warms the same path.
func (m *Manager) warmUp(ctx context.Context, id string) {
	m.mu.Lock()
	inst := m.instances[id]
	m.mu.Unlock()
	if inst == nil {
		return
	}
	callCtx, cancel := context.WithTimeout(ctx, m.agentCallTimeout())
	defer cancel()
	agentapi.Call[wire.ExecResult](callCtx, inst.agent, agentapi.Exec, agentapi.Params{}, wire.ExecRequest{Cmd: []string{"true"}})
}
