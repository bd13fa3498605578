package sandbox

import (
	"context"
	"github.com/sbxhq/sbx/internal/auth"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// fakeRuntime is an in-memory runtime: containers are map entries.
type fakeRuntime struct {
	mu         sync.Mutex
	containers map[string]runtime.Status
	deleted    []string
}

func (f *fakeRuntime) Start(ctx context.Context, inst *runtime.Instance) (runtime.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := runtime.Status{ID: inst.ID, Running: true, Pid: 1 << 30}
	f.containers[inst.ID] = st
	return st, nil
}

func (f *fakeRuntime) State(ctx context.Context, id string) (runtime.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.containers[id]
	if !ok {
		return st, errdefs.NotFound("INSTANCE_NOT_FOUND", "no container %s", id)
	}
	return st, nil
}

func (f *fakeRuntime) Kill(ctx context.Context, id string, sig syscall.Signal) error { return nil }

func (f *fakeRuntime) Delete(ctx context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.containers, id)
	f.deleted = append(f.deleted, id)
	return nil
}

func (f *fakeRuntime) List(ctx context.Context) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ids []string
	for id := range f.containers {
		ids = append(ids, id)
	}
	return ids, nil
}

type fakeImages struct{}

func (fakeImages) Get(ctx context.Context, name string) (*store.Image, error) {
	if name != "base" {
		return nil, errdefs.NotFound("IMAGE_NOT_FOUND", "image %q not found", name)
	}
	return &store.Image{Name: "base", ID: "sha256:b", Layers: []string{"sha256:l"}}, nil
}
func (fakeImages) LayerDirs(layers []string) []string { return layers }

type fakeRootfs struct{}

func (fakeRootfs) Mount(layers []string, upper, work, target string) error { return nil }
func (fakeRootfs) Unmount(target string) error                             { return nil }

func newFakeManager(t *testing.T) (*Manager, *fakeRuntime, store.Store) {
	t.Helper()
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "sbx.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rt := &fakeRuntime{containers: map[string]runtime.Status{}}
	// The fake runtime starts no agent, so waits for one must end quickly.
	m, err := New(Config{DataDir: t.TempDir(), Store: st, Images: fakeImages{}, Rootfs: fakeRootfs{}, Runtimes: map[string]runtime.Runtime{ClassContainer: rt}, ReadyTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m, rt, st
}

// TestReconcileFinishesInterruptedOperations puts records in the states a
// crash can leave and checks what Reconcile makes of each.
func TestReconcileFinishesInterruptedOperations(t *testing.T) {
	m, rt, st := newFakeManager(t)
	ctx := auth.System(context.Background(), "test")
	put := func(id string, state wire.State, running bool) {
		if err := st.CreateSandbox(ctx, &store.Sandbox{ID: id, State: state, Spec: store.Spec{Image: "base"}}); err != nil {
			t.Fatal(err)
		}
		if running {
			rt.containers[id] = runtime.Status{ID: id, Running: true, Pid: 1 << 30}
		}
	}
	put("sbx-creating", wire.StateCreating, true)
	put("sbx-deleting", wire.StateDeleting, true)
	put("sbx-stopping", wire.StateStopping, true)
	put("sbx-lost", wire.StateStarted, false)                                     // its instance died while the daemon was down
	put("sbx-noagent", wire.StateStarted, true)                                   // runs, but no agent answers
	put("sbx-stopped", wire.StateStopped, true)                                   // a stale container must go
	rt.containers["sbx-orphan"] = runtime.Status{ID: "sbx-orphan", Running: true} // no record

	if err := m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"sbx-creating", "sbx-deleting"} {
		if _, err := st.GetSandbox(ctx, gone); !errdefs.Is(err, errdefs.KindNotFound) {
			t.Errorf("%s: record should be gone, got %v", gone, err)
		}
	}
	want := map[string]string{"sbx-stopping": "reconcile", "sbx-lost": "crash", "sbx-noagent": "crash", "sbx-stopped": ""}
	for id, reason := range want {
		sb, err := st.GetSandbox(ctx, id)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if sb.State != wire.StateStopped || (reason != "" && sb.Reason != reason) {
			t.Errorf("%s: state %s reason %q, want stopped %q", id, sb.State, sb.Reason, reason)
		}
	}
	if ids, _ := rt.List(ctx); len(ids) != 0 {
		t.Errorf("containers left after reconcile: %v", ids)
	}
}

func TestCreateRollsBackWhenTheAgentNeverAnswers(t *testing.T) {
	m, rt, st := newFakeManager(t)
	ctx := auth.System(context.Background(), "test")
	_, err := m.Create(ctx, wire.CreateSandboxRequest{Name: "never"})
	if !errdefs.Is(err, errdefs.KindUnavailable) {
		t.Fatalf("create: want unavailable, got %v", err)
	}
	if list, _ := st.ListSandboxes(ctx, store.Filter{}); len(list) != 0 {
		t.Errorf("records left: %d", len(list))
	}
	if ids, _ := rt.List(ctx); len(ids) != 0 || len(rt.deleted) == 0 {
		t.Errorf("containers left %v, deleted %v", ids, rt.deleted)
	}
}

func TestValidateCreate(t *testing.T) {
	bad := []wire.CreateSandboxRequest{
		{Name: "UPPER"}, {Name: "-lead"}, {Name: "sbx-reserved"}, {Name: string(make([]byte, 64))},
		{CPU: -1}, {CPU: 0.001}, {CPU: 1000}, {MemoryMiB: -5}, {MemoryMiB: 1}, {PidsLimit: -1},
		{Workdir: "rel"}, {Workdir: "/a/../b"}, {Env: map[string]string{"": "x"}}, {Labels: map[string]string{"bad key": "x"}},
	}
	for _, req := range bad {
		if err := validateCreate(&req); !errdefs.Is(err, errdefs.KindInvalid) {
			t.Errorf("%+v: want invalid, got %v", req, err)
		}
	}
	good := wire.CreateSandboxRequest{Name: "ok-1", CPU: 0.5, MemoryMiB: 64, PidsLimit: 100, Workdir: "/w", Env: map[string]string{"A_1": "x"}, Labels: map[string]string{"team/x": "y"}}
	if err := validateCreate(&good); err != nil {
		t.Errorf("valid request refused: %v", err)
	}
}
