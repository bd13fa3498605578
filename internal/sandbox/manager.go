// Package sandbox holds the Manager: the one place where sandboxes change state.
//
// Every operation writes its intent (a transitional state such as "starting")
// to the store before it acts, so that a daemon crash mid-way is finished or
// rolled back by Reconcile on the next start. Operations on one sandbox are
// serialised by a per-sandbox lock; different sandboxes proceed in parallel.
package sandbox

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/blob"
	"github.com/sbxhq/sbx/internal/diskspace"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Images is what the Manager needs of the image manager.
type Images interface {
	Get(ctx context.Context, name string) (*store.Image, error)
	LayerDirs(layers []string) []string
}

// Rootfs mounts and unmounts a sandbox's root filesystem.
type Rootfs interface {
	Mount(layerDirs []string, upper, work, target string) error
	Unmount(target string) error
}

// Defaults are the resources a sandbox gets when the caller names none.
type Defaults struct {
	Image     string
	CPU       float64
	MemoryMiB int
	PidsLimit int
	Workdir   string
	// DiskMiB is the disk of a sandbox whose create names none (disk.go);
	// 0: its writes go to the data dir unbounded.
	DiskMiB int
	// The operator's defaults (defaults.go): Env and Egress fill what a
	// create request leaves out; CABundle, a host PEM file, is every
	// instance's trust store. HTTPEgressCABundle is CABundle (or the
	// host's public CAs) plus the HTTP egress proxy's CA: the trust store
	// of an instance whose egress policy has HTTP rules when it starts.
	Env                map[string]string
	Egress             *wire.EgressPolicy
	CABundle           string
	HTTPEgressCABundle string
}

// Config holds the Manager's dependencies.
type Config struct {
	DataDir     string // sandboxes live in DataDir/sandboxes/<id>
	AgentBinary string // host path of the sbx binary bind-mounted into instances
	Store       store.Store
	Images      Images
	Rootfs      Rootfs
	// Runtimes run the instances of each class (ClassContainer,
	// ClassGVisor); a class without one is unavailable. See class.go.
	Runtimes map[string]runtime.Runtime
	Defaults Defaults
	Logger   *slog.Logger
	// ReadyTimeout bounds how long a start waits for the agent to answer.
	ReadyTimeout time.Duration
	// AgentCallTimeout bounds each other call the Manager makes to an agent
	// (default DefaultAgentCallTimeout; see agentcall.go).
	AgentCallTimeout time.Duration

	// Lifecycle (see policy.go). Blobs receives archives; nil disables
	// archiving. OnEvent is called after each recorded event and must not
	// block. LazyStartTimeout bounds a toolbox call's wait for a lazy start
	// (default DefaultLazyStartTimeout).
	Blobs            blob.Store
	OnEvent          func(store.Event)
	LazyStartTimeout time.Duration

	// Network wires instances into the network; nil: loopback only.
	Network Network

	// Disk refuses starts below the data dir's free-space reserve; nil: none.
	Disk *diskspace.Guard

	Observer Observer // told of operations, for metrics; nil: none (observer.go)

	Volumes Volumes // named volumes for create's volumes field; nil: none (volumes.go)
}

// Manager creates, starts, stops and deletes sandboxes.
type Manager struct {
	cfg   Config
	log   *slog.Logger
	locks keyedMutex // by sandbox id
	names keyedMutex // by sandbox name, for get-or-create

	mu        sync.Mutex
	instances map[string]*instance     // running instances by sandbox id
	graceful  map[string]*gracefulStop // under way, for a force stop to cut short (agentcall.go)
	// ctx is the context of the Manager's own background work (monitors,
	// timers, pool fills, lazy starts); Close cancels it.
	ctx    context.Context
	cancel context.CancelFunc
	closed <-chan struct{} // ctx.Done()
	wg     sync.WaitGroup  // the background work

	life lifecycle // activity, lazy starts, deadlines, event notifier

	pools pools // warm pools (pool.go)
}

// instance is one running container behind a sandbox.
type instance struct {
	pid    int
	exited <-chan struct{}
	agent  *agentapi.Client
}

// New returns a Manager. Call Reconcile before serving requests.
func New(cfg Config) (*Manager, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ReadyTimeout == 0 {
		cfg.ReadyTimeout = 30 * time.Second
	}
	d := &cfg.Defaults
	if d.Image == "" {
		d.Image = "base"
	}
	if d.CPU == 0 {
		d.CPU = 1
	}
	if d.MemoryMiB == 0 {
		d.MemoryMiB = 1024
	}
	if d.PidsLimit == 0 {
		d.PidsLimit = 1024
	}
	if d.Workdir == "" {
		d.Workdir = "/workspace"
	}
	if err := os.MkdirAll(filepath.Join(cfg.DataDir, "sandboxes"), 0o700); err != nil {
		return nil, err
	}
	m := &Manager{cfg: cfg, log: cfg.Logger, instances: map[string]*instance{}, graceful: map[string]*gracefulStop{}}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	m.closed = m.ctx.Done()
	m.pools.byKey, m.pools.wake = map[poolKey]*warmPool{}, make(chan struct{}, 1)
	return m, nil
}

// Close stops watching instances, cancels the Manager's background work
// and waits for it to end. Instances keep running (docs/architecture.md,
// invariant 5); reconcile finishes what a cancelled operation left.
func (m *Manager) Close() {
	m.cancel()
	m.wg.Wait()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, inst := range m.instances {
		inst.agent.Close() // its idle connections
	}
}

// Get returns a sandbox by id or name, with its latest activity and deadline.
func (m *Manager) Get(ctx context.Context, idOrName string) (*store.Sandbox, error) {
	sb, err := m.cfg.Store.GetSandbox(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	return m.withActivity(sb), nil
}

// List returns the sandboxes that match f, with their latest activity and
// deadlines; never the instances waiting in warm pools.
func (m *Manager) List(ctx context.Context, f store.Filter) ([]*store.Sandbox, error) {
	f.UserSandboxes = true
	list, err := m.cfg.Store.ListSandboxes(ctx, f)
	for _, sb := range list {
		m.withActivity(sb)
	}
	return list, err
}

// Create makes a sandbox and starts its first instance. On error nothing of
// it remains.
func (m *Manager) Create(ctx context.Context, req wire.CreateSandboxRequest) (*store.Sandbox, error) {
	if req.Name != "" {
		unlock := m.names.Lock(req.Name)
		defer unlock()
	}
	return m.create(ctx, req)
}

// Ensure returns the sandbox named name, creating it from req if there is none.
// Concurrent calls for one name yield one sandbox.
func (m *Manager) Ensure(ctx context.Context, name string, req wire.CreateSandboxRequest) (sb *store.Sandbox, created bool, err error) {
	if err := ValidateName(name); err != nil {
		return nil, false, err
	}
	if req.Name != "" && req.Name != name {
		return nil, false, errdefs.Invalid(wire.CodeNameMismatch, "the body names sandbox %q but the path names %q; leave name out of the body", req.Name, name)
	}
	req.Name = name
	unlock := m.names.Lock(name)
	defer unlock()
	sb, err = m.cfg.Store.GetSandbox(ctx, name)
	if err == nil && sb.Name == name {
		return sb, false, nil
	}
	if err != nil && !errdefs.Is(err, errdefs.KindNotFound) {
		return nil, false, err
	}
	sb, err = m.create(ctx, req)
	return sb, err == nil, err
}

func (m *Manager) create(ctx context.Context, req wire.CreateSandboxRequest) (*store.Sandbox, error) {
	return m.createAs(ctx, newID(), req)
}

// createAs is create with the id chosen by the caller (import.go).
func (m *Manager) createAs(ctx context.Context, id string, req wire.CreateSandboxRequest) (_ *store.Sandbox, err error) {
	// The caller going away must not leave a half-made sandbox behind.
	ctx = context.WithoutCancel(ctx)
	if req.Pool != "" {
		if req, err = m.withPoolTemplate(ctx, req); err != nil { // adopt.go
			return nil, err
		}
	}
	if err := validateCreate(&req); err != nil {
		return nil, err
	}
	spec, err := m.resolveSpec(ctx, req)
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	if err := resolveLifecycle(&spec, req, now); err != nil {
		return nil, err
	}
	if sb, handled, err := m.adopt(ctx, req, spec); handled { // a warm pool's instance, if one matches
		return sb, err
	}
	defer m.observe("create", "user", time.Now(), &err)
	sb := &store.Sandbox{ID: id, Name: req.Name, State: wire.StateCreating, Reason: "create", Spec: spec, CreatedAt: now}
	unlock := m.locks.Lock(sb.ID)
	defer unlock()
	if err := m.cfg.Store.CreateSandbox(ctx, sb); err != nil {
		return nil, err
	}
	if err := m.startInstance(ctx, sb); err != nil {
		m.removeAll(ctx, sb)
		return nil, err
	}
	if err := m.transition(ctx, sb, wire.StateStarted, "create", ""); err != nil {
		m.removeAll(ctx, sb)
		return nil, err
	}
	return sb, nil
}

func (m *Manager) resolveSpec(ctx context.Context, req wire.CreateSandboxRequest) (store.Spec, error) {
	req = m.withOperatorDefaults(req) // defaults.go
	d := m.cfg.Defaults
	imgName := req.Image
	if imgName == "" {
		imgName = d.Image
	}
	img, err := m.cfg.Images.Get(ctx, imgName)
	if err != nil {
		return store.Spec{}, err
	}
	spec := store.Spec{
		Image: img.Name, ImageID: img.ID, Layers: img.Layers, ImageConfig: img.Config,
		Env: req.Env, Labels: req.Labels,
		CPU: req.CPU, MemoryMiB: req.MemoryMiB, PidsLimit: req.PidsLimit, Workdir: req.Workdir,
		DiskMiB: req.DiskMiB,
	}
	if len(req.Entrypoint) == 0 && req.Snapshot == "" && !req.IgnoreImageEntrypoint {
		spec.Entrypoint = imageMain(img) // resolveLifecycle makes it the main process
	}
	if spec.CPU == 0 {
		spec.CPU = d.CPU
	}
	if spec.MemoryMiB == 0 {
		spec.MemoryMiB = d.MemoryMiB
	}
	if spec.PidsLimit == 0 {
		spec.PidsLimit = d.PidsLimit
	}
	if spec.Workdir == "" && path.IsAbs(img.Config.WorkingDir) && img.Config.WorkingDir != "/" {
		spec.Workdir = img.Config.WorkingDir // the image's WORKDIR, as docker does
	}
	if spec.Workdir == "" {
		spec.Workdir = d.Workdir
	}
	if err := m.resolveNetwork(req, &spec); err != nil {
		return store.Spec{}, err
	}
	if err := m.applyClassAndSnapshot(ctx, req, &spec); err != nil { // snapshot.go
		return store.Spec{}, err
	}
	if spec.DiskMiB == 0 && req.Snapshot == "" {
		spec.DiskMiB, spec.DiskDefault = m.defaultDiskMiB(ctx), true // disk.go
	}
	if err := m.resolveVolumes(ctx, req, &spec); err != nil { // volumes.go
		return store.Spec{}, err
	}
	return spec, nil
}

// imageMain is the main process an image brings: ENTRYPOINT then CMD, for
// images sbx built only. A pulled or imported image's CMD is mostly an
// interactive shell that would exit at once and stop the sandbox, so it
// is recorded but never run.
func imageMain(img *store.Image) []string {
	if img.Source != store.SourceBuild {
		return nil
	}
	return append(slices.Clone(img.Config.Entrypoint), img.Config.Cmd...)
}

// transition records a state change with its reason.
func (m *Manager) transition(ctx context.Context, sb *store.Sandbox, state wire.State, reason, msg string) error {
	now := time.Now().UTC()
	prev := *sb
	sb.State, sb.Reason = state, reason
	sb.Error = ""
	switch state {
	case wire.StateStarted:
		sb.StartedAt, sb.StoppedAt = now, time.Time{}
	case wire.StateStopped:
		sb.StoppedAt = now
	case wire.StateError:
		sb.Error = msg
	}
	if sb.Pool != "" {
		// A warm pool's instance is nobody's sandbox yet: no activity, no
		// deadline, no event (pool.go).
		if err := m.cfg.Store.UpdateSandbox(ctx, sb, nil); err != nil {
			*sb = prev
			return fmt.Errorf("record state %s of %s: %w", state, sb.ID, err)
		}
		return nil
	}
	m.beforeWrite(sb, now) // the next deadline is written with the state
	ev := &store.Event{SandboxID: sb.ID, Time: now, State: state, Reason: reason, Message: msg}
	if err := m.cfg.Store.UpdateSandbox(ctx, sb, ev); err != nil {
		*sb = prev
		return fmt.Errorf("record state %s of %s: %w", state, sb.ID, err)
	}
	m.published(*ev)
	return nil
}

// dirs are the host paths of one sandbox.
type dirs struct{ root, upper, work, rootfs, run, bundle, log string }

func (m *Manager) dirsOf(id string) dirs {
	root := filepath.Join(m.cfg.DataDir, "sandboxes", id)
	return dirs{
		root:   root,
		upper:  filepath.Join(root, "upper"),
		work:   filepath.Join(root, "work"),
		rootfs: filepath.Join(root, "rootfs"),
		run:    filepath.Join(root, "run"),
		bundle: filepath.Join(root, "bundle"),
		log:    filepath.Join(root, "agent.log"),
	}
}

// UsesLayers reports whether any sandbox's spec or any snapshot, of any
// team, names one of layers.
func (m *Manager) UsesLayers(ctx context.Context, layers []string) (bool, error) {
	// Layers are shared by every team.
	ctx = auth.System(ctx, "layers in use")
	if used, err := m.snapshotsUseLayers(ctx, layers); err != nil || used { // snapshot.go
		return used, err
	}
	all, err := m.cfg.Store.ListSandboxes(ctx, store.Filter{})
	if err != nil {
		return false, err
	}
	want := map[string]bool{}
	for _, l := range layers {
		want[l] = true
	}
	for _, sb := range all {
		for _, l := range sb.Spec.Layers {
			if want[l] {
				return true, nil
			}
		}
	}
	return false, nil
}

// UsesImage returns a sandbox, of any team, that was created from team's
// image name, if any: one of team's own, or of any team when team is
// default (whose images every team sees; image names are per team).
func (m *Manager) UsesImage(ctx context.Context, team, name string) (*store.Sandbox, error) {
	ctx = auth.System(ctx, "image in use") // a team's sandbox may use the default team's image
	all, err := m.cfg.Store.ListSandboxes(ctx, store.Filter{})
	if err != nil {
		return nil, err
	}
	for _, sb := range all {
		if sb.Spec.Image == name && (team == auth.DefaultTeam || teamOf(sb) == team) {
			return sb, nil
		}
	}
	return nil, nil
}
