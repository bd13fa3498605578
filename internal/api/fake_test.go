package api

import (
	"context"
	"io"
	"time"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// fakeSandboxes is a Sandboxes that knows one sandbox, "sb1", and answers
// err (default: not found) for everything else. Tests set the fields they
// need.
type fakeSandboxes struct {
	err           error            // what every lookup of another sandbox returns
	agent         *agentapi.Client // what Agent returns for sb1; nil: err
	created       []wire.CreateSandboxRequest
	closed        chan struct{}
	stopped       bool       // sb1 is stopped (else started)
	agents        int        // calls of Agent, which would start sb1
	lookups       int        // calls of AgentIfRunning
	holds         int        // calls of Hold (activity)
	ensured       []string   // names passed to Ensure
	ensureCreates bool       // Ensure succeeds for any name
	endState      wire.State // what InstanceEnd answers
	endReason     string
	mainLog       string // what MainLogPath answers; "": a path that does not exist
}

func newFake() *fakeSandboxes {
	return &fakeSandboxes{err: errdefs.NotFound(wire.CodeSandboxNotFound, "no sandbox"), closed: make(chan struct{})}
}

var sb1 = &store.Sandbox{ID: "sb1", Name: "one", State: wire.StateStarted}

func (f *fakeSandboxes) lookup(id string) (*store.Sandbox, error) {
	if (id == "sb1" || id == "one") && f.stopped {
		stopped := *sb1
		stopped.State = wire.StateStopped
		return &stopped, nil
	}
	if id == "sb1" || id == "one" {
		return sb1, nil
	}
	return nil, f.err
}

func (f *fakeSandboxes) Create(ctx context.Context, req wire.CreateSandboxRequest) (*store.Sandbox, error) {
	f.created = append(f.created, req)
	return sb1, nil
}
func (f *fakeSandboxes) Ensure(ctx context.Context, name string, req wire.CreateSandboxRequest) (*store.Sandbox, bool, error) {
	f.ensured = append(f.ensured, name)
	if f.ensureCreates {
		return sb1, true, nil
	}
	sb, err := f.lookup(name)
	return sb, false, err
}
func (f *fakeSandboxes) List(ctx context.Context, _ store.Filter) ([]*store.Sandbox, error) {
	return []*store.Sandbox{sb1}, nil
}
func (f *fakeSandboxes) Get(ctx context.Context, id string) (*store.Sandbox, error) {
	return f.lookup(id)
}
func (f *fakeSandboxes) Delete(ctx context.Context, id string, wait bool) (*store.Sandbox, error) {
	return f.lookup(id)
}
func (f *fakeSandboxes) DeleteCascade(ctx context.Context, id string, wait bool) (*store.Sandbox, error) {
	return f.lookup(id)
}
func (f *fakeSandboxes) Start(ctx context.Context, id string) (*store.Sandbox, error) {
	return f.lookup(id)
}
func (f *fakeSandboxes) Stop(ctx context.Context, id string, _ sandbox.StopOptions) (*store.Sandbox, error) {
	return f.lookup(id)
}
func (f *fakeSandboxes) Update(ctx context.Context, id string, _ wire.UpdateSandboxRequest) (*store.Sandbox, error) {
	return f.lookup(id)
}
func (f *fakeSandboxes) Archive(ctx context.Context, id string) (*store.Sandbox, error) {
	return f.lookup(id)
}
func (f *fakeSandboxes) WaitState(ctx context.Context, id string, _ wire.State, _ time.Duration) (*store.Sandbox, error) {
	return f.lookup(id)
}
func (f *fakeSandboxes) Events(ctx context.Context, id string, after int64, limit int) ([]store.Event, error) {
	return nil, nil
}
func (f *fakeSandboxes) EventsChanged() <-chan struct{} { return make(chan struct{}) }
func (f *fakeSandboxes) Closed() <-chan struct{}        { return f.closed }
func (f *fakeSandboxes) MainLogPath(sb *store.Sandbox) (string, error) {
	if f.mainLog != "" {
		return f.mainLog, nil
	}
	return "/nonexistent/sbx-api-test/main.log", nil
}
func (f *fakeSandboxes) Hold(ctx context.Context, id string) func() { f.holds++; return func() {} }
func (f *fakeSandboxes) Pause(ctx context.Context, id string) (*store.Sandbox, error) {
	return f.lookup(id)
}
func (f *fakeSandboxes) Resume(ctx context.Context, id string) (*store.Sandbox, error) {
	return f.lookup(id)
}
func (f *fakeSandboxes) CreateSnapshot(ctx context.Context, id string, _ wire.CreateSnapshotRequest) (*store.Snapshot, error) {
	return nil, f.err
}
func (f *fakeSandboxes) ListSnapshots(ctx context.Context) ([]*store.Snapshot, error) {
	return nil, nil
}
func (f *fakeSandboxes) GetSnapshot(ctx context.Context, name string) (*store.Snapshot, error) {
	return nil, f.err
}
func (f *fakeSandboxes) DeleteSnapshot(ctx context.Context, name string) error { return f.err }
func (f *fakeSandboxes) Fork(ctx context.Context, id string, _ wire.ForkRequest) (*sandbox.ForkResult, error) {
	return nil, f.err
}
func (f *fakeSandboxes) Forks(ctx context.Context, id string) ([]*store.Sandbox, error) {
	return nil, f.err
}
func (f *fakeSandboxes) Parent(ctx context.Context, id string) (*store.Sandbox, error) {
	return nil, f.err
}
func (f *fakeSandboxes) Ancestors(ctx context.Context, id string) ([]*store.Sandbox, error) {
	return nil, f.err
}
func (f *fakeSandboxes) UsesImage(ctx context.Context, team, name string) (*store.Sandbox, error) {
	return nil, nil
}
func (f *fakeSandboxes) UsesLayers(ctx context.Context, layers []string) (bool, error) {
	return false, nil
}
func (f *fakeSandboxes) SetEgress(ctx context.Context, id string, _ wire.EgressPolicy) (*store.Sandbox, error) {
	return f.lookup(id)
}
func (f *fakeSandboxes) EnsureServing(ctx context.Context, id string, _ int) (*store.Sandbox, error) {
	return f.lookup(id)
}
func (f *fakeSandboxes) Agent(ctx context.Context, id string) (*agentapi.Client, *store.Sandbox, error) {
	f.agents++
	sb, err := f.lookup(id)
	if err != nil {
		return nil, nil, err
	}
	if f.agent == nil {
		return nil, nil, errdefs.Unavailable(wire.CodeAgentUnavailable, "no agent in this test")
	}
	return f.agent, sb, nil
}

func (f *fakeSandboxes) AgentIfRunning(ctx context.Context, id string) (*agentapi.Client, *store.Sandbox, error) {
	f.lookups++
	sb, err := f.lookup(id)
	if err != nil {
		return nil, nil, err
	}
	if f.agent == nil || sb.State != wire.StateStarted {
		return nil, sb, errdefs.NotFound(wire.CodeNotInCurrentInstance, "no instance in this test")
	}
	return f.agent, sb, nil
}

func (f *fakeSandboxes) InstanceEnd(ctx context.Context, id string, _ time.Duration) (wire.State, string) {
	return f.endState, f.endReason
}

// fakeImages knows no image.
type fakeImages struct{}

func (fakeImages) List(ctx context.Context) ([]*store.Image, error) { return nil, nil }
func (fakeImages) Get(ctx context.Context, name string) (*store.Image, error) {
	return nil, errdefs.NotFound(wire.CodeImageNotFound, "no image %s", name)
}
func (fakeImages) Import(ctx context.Context, name string, r io.Reader) (*store.Image, error) {
	return nil, errdefs.Invalid(wire.CodeInvalidImage, "not an image")
}
func (fakeImages) Pull(ctx context.Context, ref, name string) (*store.Image, error) {
	return nil, errdefs.Unavailable(wire.CodeRegistryUnavailable, "no registry")
}
func (fakeImages) Remove(ctx context.Context, name string, inUse func([]string) bool) error {
	return errdefs.NotFound(wire.CodeImageNotFound, "no image %s", name)
}

var (
	_ Sandboxes = (*sandbox.Manager)(nil) // the real Manager fits
	_ Sandboxes = (*fakeSandboxes)(nil)
	_ Images    = fakeImages{}
)
