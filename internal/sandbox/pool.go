package sandbox

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Warm pools. A pool keeps started instances of one template ready; a
// create whose resolved spec matches the template (or that names the
// pool) adopts one instead of starting an instance (adopt.go), and the
// pool starts a replacement in the background (poolfill.go).
//
// A pool instance is an ordinary sandbox record with Pool set: it is made,
// started, reconciled after a daemon restart and deleted by the same code
// as any sandbox, so it leaks nothing a sandbox does not. Until adopted it
// is nobody's sandbox: lookups made for a request never find it, lists
// leave it out, it records no events and no activity, and it has no idle
// deadline. It belongs to its pool's team, and it counts against that
// team's quotas like any started sandbox of the same size: the team pays
// for its warm capacity, adoption changes no count, and a pool cannot be
// used to run past a quota. A refill the quota refuses waits and retries.

// Pool sizes.
const (
	maxPoolSize = 100
	// poolBurstWindow is how far back adoptions raise a pool's target.
	poolBurstWindow = time.Minute
)

// poolStore is what pools need of the store (store.SQLite).
type poolStore interface {
	PutPool(ctx context.Context, p *store.PoolRecord, replace bool) error
	GetPool(ctx context.Context, team, name string) (*store.PoolRecord, error)
	ListPools(ctx context.Context) ([]*store.PoolRecord, error)
	DeletePool(ctx context.Context, team, name string) error
}

type poolKey struct{ team, name string }

// warmPool is the in-memory state of one pool; pools.mu guards it.
type warmPool struct {
	rec      store.PoolRecord
	spec     store.Spec // the template resolved when the pool was made or last filled
	ready    []string   // ids of started instances waiting, oldest first
	starting int
	adopted  int64
	missed   int64
	recent   []time.Time // adoptions within poolBurstWindow
	gone     bool        // deleted: instances still starting are deleted when they are up
	retryAt  time.Time   // after a failed fill
}

// target is how many instances the pool fills to at now.
func (p *warmPool) target(now time.Time) int {
	p.recent = slices.DeleteFunc(p.recent, func(t time.Time) bool { return now.Sub(t) > poolBurstWindow })
	return min(p.rec.Spec.Min+len(p.recent), p.rec.Spec.Max)
}

// pools is the Manager's set of warm pools.
type pools struct {
	mu     sync.Mutex
	byKey  map[poolKey]*warmPool
	wake   chan struct{} // pokes the filler (poolfill.go)
	fillWG sync.WaitGroup
}

func (ps *pools) poke() {
	select {
	case ps.wake <- struct{}{}:
	default:
	}
}

func (m *Manager) poolStore() (poolStore, error) {
	s, ok := m.cfg.Store.(poolStore)
	if !ok {
		return nil, errdefs.Unavailable(wire.CodeInvalidPool, "this daemon's store keeps no pools")
	}
	return s, nil
}

// callerTeam is the team whose pools a request uses: its key's team, the
// default team for the bootstrap admin and internal callers.
func callerTeam(ctx context.Context) string {
	if p, ok := auth.FromContext(ctx); ok && p.Team != "" {
		return p.Team
	}
	return auth.DefaultTeam
}

// templateRequest is the create request a pool's instances are made from.
// They are kept alive (no idle stop) while they wait; an adopting create
// brings its own lifecycle policy.
func templateRequest(t wire.PoolTemplate) wire.CreateSandboxRequest {
	return wire.CreateSandboxRequest{
		Image: t.Image, Class: t.Class, CPU: t.CPU, MemoryMiB: t.MemoryMiB, PidsLimit: t.PidsLimit,
		DiskMiB: t.DiskMiB, Workdir: t.Workdir, Env: maps.Clone(t.Env), Network: t.Network, Egress: t.Egress,
		KeepAlive: true,
	}
}

// resolvePoolSpec resolves a pool's template as a create would.
func (m *Manager) resolvePoolSpec(ctx context.Context, t wire.PoolTemplate) (store.Spec, error) {
	req := templateRequest(t)
	if err := validateCreate(&req); err != nil {
		return store.Spec{}, err
	}
	spec, err := m.resolveSpec(ctx, req)
	if err != nil {
		return store.Spec{}, err
	}
	if len(spec.Entrypoint) > 0 {
		return store.Spec{}, errdefs.Invalid(wire.CodeInvalidPool, "image %s runs a main process (ENTRYPOINT/CMD); a pool's instances must start idle, so pool another image", spec.Image)
	}
	if len(spec.Volumes) > 0 || len(spec.Buckets) > 0 {
		return store.Spec{}, errdefs.Invalid(wire.CodeInvalidPool, "a pool's instances mount no volumes")
	}
	if err := resolveLifecycle(&spec, req, time.Now().UTC()); err != nil {
		return store.Spec{}, err
	}
	return spec, nil
}

// poolMatches reports whether an instance made from pool can serve a
// create that resolved to want: everything that shapes the instance is
// the same. Env, labels, egress and the lifecycle policy may differ:
// adoption applies them.
func poolMatches(pool, want store.Spec) bool {
	return pool.ImageID == want.ImageID && slices.Equal(pool.Layers, want.Layers) &&
		classOf(pool) == classOf(want) && pool.CPU == want.CPU && pool.MemoryMiB == want.MemoryMiB &&
		pool.PidsLimit == want.PidsLimit && sameDisk(pool, want) && pool.Workdir == want.Workdir &&
		pool.Network == want.Network && reflect.DeepEqual(pool.ImageConfig, want.ImageConfig) &&
		len(want.Entrypoint) == 0 && want.Snapshot == "" && want.Parent == "" &&
		len(want.Volumes) == 0 && len(want.Buckets) == 0 &&
		hasHTTPRules(pool) == hasHTTPRules(want) // they decide the trust store (caBundle)
}

// sameDisk: the same diskMiB, or both the daemon's default, whose size
// follows the free space at each create (disk.go).
func sameDisk(pool, want store.Spec) bool {
	return pool.DiskMiB == want.DiskMiB || (pool.DiskDefault && want.DiskDefault)
}

func hasHTTPRules(s store.Spec) bool { return s.Egress != nil && s.Egress.HTTP != nil }

func validatePoolRequest(req *wire.CreatePoolRequest) error {
	if err := ValidateName(req.Name); err != nil {
		return errdefs.Invalid(wire.CodeInvalidPool, "invalid pool name: %v", err)
	}
	if req.Max == 0 {
		req.Max = req.Min
	}
	return validatePoolSize(req.Min, req.Max)
}

func validatePoolSize(lo, hi int) error {
	if lo < 0 || lo > maxPoolSize || hi < 1 || hi > maxPoolSize || hi < lo {
		return errdefs.Invalid(wire.CodeInvalidPool, "a pool needs 0 <= min <= max, 1 <= max <= %d; got min %d, max %d", maxPoolSize, lo, hi)
	}
	return nil
}

// CreatePool makes a warm pool of the caller's team and starts filling it.
func (m *Manager) CreatePool(ctx context.Context, req wire.CreatePoolRequest) (*wire.Pool, error) {
	ps, err := m.poolStore()
	if err != nil {
		return nil, err
	}
	if err := validatePoolRequest(&req); err != nil {
		return nil, err
	}
	spec, err := m.resolvePoolSpec(ctx, req.Template) // bad images, classes, egress: 4xx now
	if err != nil {
		return nil, err
	}
	rec := &store.PoolRecord{Team: callerTeam(ctx), Name: req.Name, Spec: req}
	if err := ps.PutPool(ctx, rec, false); err != nil {
		return nil, err
	}
	m.pools.mu.Lock()
	wp := &warmPool{rec: *rec, spec: spec}
	m.pools.byKey[poolKey{rec.Team, rec.Name}] = wp
	out := wp.view(time.Now())
	m.pools.mu.Unlock()
	m.pools.poke()
	return out, nil
}

// GetPool returns the caller's team's pool called name.
func (m *Manager) GetPool(ctx context.Context, name string) (*wire.Pool, error) {
	m.pools.mu.Lock()
	defer m.pools.mu.Unlock()
	wp := m.pools.byKey[poolKey{callerTeam(ctx), name}]
	if wp == nil {
		return nil, store.PoolNotFound(name)
	}
	return wp.view(time.Now()), nil
}

// ListPools returns the caller's team's pools, by name.
func (m *Manager) ListPools(ctx context.Context) ([]wire.Pool, error) {
	team := callerTeam(ctx)
	m.pools.mu.Lock()
	defer m.pools.mu.Unlock()
	out := []wire.Pool{}
	for k, wp := range m.pools.byKey {
		if k.team == team {
			out = append(out, *wp.view(time.Now()))
		}
	}
	slices.SortFunc(out, func(a, b wire.Pool) int { return cmpString(a.Name, b.Name) })
	return out, nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// UpdatePool resizes a pool. Instances past a smaller size are deleted.
func (m *Manager) UpdatePool(ctx context.Context, name string, req wire.UpdatePoolRequest) (*wire.Pool, error) {
	ps, err := m.poolStore()
	if err != nil {
		return nil, err
	}
	key := poolKey{callerTeam(ctx), name}
	m.pools.mu.Lock()
	wp := m.pools.byKey[key]
	if wp == nil {
		m.pools.mu.Unlock()
		return nil, store.PoolNotFound(name)
	}
	rec := wp.rec
	m.pools.mu.Unlock()
	if req.Min != nil {
		rec.Spec.Min = *req.Min
	}
	if req.Max != nil {
		rec.Spec.Max = *req.Max
	}
	if err := validatePoolSize(rec.Spec.Min, rec.Spec.Max); err != nil {
		return nil, err
	}
	if err := ps.PutPool(ctx, &rec, true); err != nil {
		return nil, err
	}
	m.pools.mu.Lock()
	wp.rec = rec
	var extra []string
	if n := len(wp.ready) - rec.Spec.Max; n > 0 {
		extra = slices.Clone(wp.ready[:n])
		wp.ready = wp.ready[n:]
	}
	out := wp.view(time.Now())
	m.pools.mu.Unlock()
	m.deletePoolInstances(extra)
	m.pools.poke()
	return out, nil
}

// DeletePool deletes a pool and the instances waiting in it; adopted
// sandboxes are not touched.
func (m *Manager) DeletePool(ctx context.Context, name string) error {
	ps, err := m.poolStore()
	if err != nil {
		return err
	}
	key := poolKey{callerTeam(ctx), name}
	if err := ps.DeletePool(ctx, key.team, name); err != nil {
		return err
	}
	m.pools.mu.Lock()
	var ids []string
	if wp := m.pools.byKey[key]; wp != nil {
		wp.gone = true
		ids = wp.ready
		wp.ready = nil
		delete(m.pools.byKey, key)
	}
	m.pools.mu.Unlock()
	m.deletePoolInstances(ids)
	return nil
}

// deletePoolInstances deletes instances taken out of their pool, waiting
// for each so that a deleted pool leaves nothing behind when it answers.
func (m *Manager) deletePoolInstances(ids []string) {
	ctx := auth.System(m.ctx, "delete pool instances")
	for _, id := range ids {
		if _, err := m.Delete(ctx, id, true); err != nil && !errdefs.Is(err, errdefs.KindNotFound) {
			m.log.Error("delete pool instance", "id", id, "err", err)
		}
	}
}

// view is the API's picture of the pool; pools.mu must be held.
func (p *warmPool) view(now time.Time) *wire.Pool {
	return &wire.Pool{
		Name: p.rec.Name, Template: p.rec.Spec.Template, Min: p.rec.Spec.Min, Max: p.rec.Spec.Max,
		Target: p.target(now), Ready: len(p.ready), Starting: p.starting,
		Adopted: p.adopted, Missed: p.missed, CreatedAt: p.rec.CreatedAt,
	}
}

// PoolStats is the number of ready instances of every pool, by team and
// name, for metrics.
func (m *Manager) PoolStats() map[[2]string]int {
	m.pools.mu.Lock()
	defer m.pools.mu.Unlock()
	out := map[[2]string]int{}
	for k, wp := range m.pools.byKey {
		out[[2]string{k.team, k.name}] = len(wp.ready)
	}
	return out
}
