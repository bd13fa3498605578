package sandbox

import (
	"context"
	"github.com/sbxhq/sbx/internal/auth"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// fakeGVisor is a fakeRuntime that can checkpoint: an image is a file.
type fakeGVisor struct{ *fakeRuntime }

func (f fakeGVisor) Checkpoint(ctx context.Context, id, dir string) error {
	f.Delete(ctx, id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "checkpoint.img"), []byte("memory"), 0o600)
}

func (f fakeGVisor) Restore(ctx context.Context, inst *runtime.Instance, dir string) (runtime.Status, error) {
	return f.Start(ctx, inst)
}

func (f fakeGVisor) SignalInit(context.Context, string, syscall.Signal) error { return nil }
func (f fakeGVisor) DropsConnections() bool                                   { return true }
func (f fakeGVisor) Pause(context.Context, string) error                      { return nil }
func (f fakeGVisor) Resume(context.Context, string) error                     { return nil }
func (f fakeGVisor) Paused(context.Context, string) (bool, error)             { return false, nil }

// TestReconcilePausedGVisor puts gvisor records in the states a crash
// during a pause or resume can leave and checks what Reconcile makes of
// each: a whole memory image means paused, none means the processes are
// lost.
func TestReconcilePausedGVisor(t *testing.T) {
	m, _, st := newFakeManager(t)
	gv := fakeGVisor{&fakeRuntime{containers: map[string]runtime.Status{}}}
	m.cfg.Runtimes[ClassGVisor] = gv
	ctx := auth.System(context.Background(), "test")
	put := func(id string, state wire.State, image bool) {
		sb := &store.Sandbox{ID: id, State: state, Spec: store.Spec{Image: "base", Class: ClassGVisor}}
		if err := st.CreateSandbox(ctx, sb); err != nil {
			t.Fatal(err)
		}
		if image {
			if err := gv.Checkpoint(ctx, id, m.checkpointDir(id)); err != nil {
				t.Fatal(err)
			}
		}
	}
	put("sbx-saved", wire.StatePausing, true)     // the checkpoint finished, the record did not
	put("sbx-unsaved", wire.StatePausing, false)  // the daemon died before the checkpoint
	put("sbx-paused", wire.StatePaused, true)     // nothing happened
	put("sbx-lost", wire.StatePaused, false)      // its image is gone
	put("sbx-resuming", wire.StateResuming, true) // the restore did not finish
	if err := m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[string]wire.State{
		"sbx-saved": wire.StatePaused, "sbx-unsaved": wire.StateStopped, "sbx-paused": wire.StatePaused,
		"sbx-lost": wire.StateStopped, "sbx-resuming": wire.StatePaused,
	}
	for id, state := range want {
		sb, err := st.GetSandbox(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if sb.State != state {
			t.Errorf("%s: %s (%s), want %s", id, sb.State, sb.Reason, state)
		}
		if got := exists(m.checkpointDir(id)); got != (state == wire.StatePaused) {
			t.Errorf("%s: memory image present = %v in state %s", id, got, sb.State)
		}
	}
	if ids, _ := gv.List(ctx); len(ids) != 0 {
		t.Errorf("instances left: %v", ids)
	}
}

func TestPauseRefusals(t *testing.T) {
	m, _, st := newFakeManager(t)
	ctx := auth.System(context.Background(), "test")
	sb := &store.Sandbox{ID: "sbx-stopped", State: wire.StateStopped, Spec: store.Spec{Image: "base"}}
	if err := st.CreateSandbox(ctx, sb); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Pause(ctx, "sbx-stopped"); errdefs.CodeOf(err) != "SANDBOX_NOT_STARTED" {
		t.Errorf("pause of a stopped sandbox: %v", err)
	}
	if _, err := m.Resume(ctx, "sbx-stopped"); errdefs.CodeOf(err) != "SANDBOX_NOT_PAUSED" {
		t.Errorf("resume of a stopped sandbox: %v", err)
	}
	// Memory needs class gvisor, with its runtime installed.
	_, err := m.CreateSnapshot(ctx, "sbx-stopped", wire.CreateSnapshotRequest{Name: "s", IncludeMemory: true})
	if !errdefs.Is(err, errdefs.KindInvalid) && !errdefs.Is(err, errdefs.KindUnavailable) {
		t.Errorf("memory snapshot of a container: %v", err)
	}
	if _, err := m.runtimeFor(ClassGVisor); errdefs.CodeOf(err) != "CLASS_UNAVAILABLE" {
		t.Errorf("gvisor without runsc: %v", err)
	}
	if _, err := m.runtimeFor("vm"); errdefs.CodeOf(err) != "INVALID_CLASS" {
		t.Errorf("class vm: %v", err)
	}
}

func TestForkNames(t *testing.T) {
	for _, tc := range []struct {
		req  wire.ForkRequest
		want []string
		code string
	}{
		{wire.ForkRequest{}, []string{""}, ""},
		{wire.ForkRequest{Name: "a"}, []string{"a"}, ""},
		{wire.ForkRequest{Name: "a", Count: 3}, []string{"a-1", "a-2", "a-3"}, ""},
		{wire.ForkRequest{Count: 2}, []string{"", ""}, ""},
		{wire.ForkRequest{Count: maxForks + 1}, nil, "INVALID_COUNT"},
		{wire.ForkRequest{Count: -1}, nil, "INVALID_COUNT"},
		{wire.ForkRequest{Name: "Bad"}, nil, "INVALID_NAME"},
		{wire.ForkRequest{Name: "sbx-x"}, nil, "INVALID_NAME"},
	} {
		got, err := forkNames(tc.req)
		if tc.code != "" {
			if string(errdefs.CodeOf(err)) != tc.code {
				t.Errorf("%+v: %v, want %s", tc.req, err, tc.code)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("%+v: %v, %v", tc.req, got, err)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%+v: %v, want %v", tc.req, got, tc.want)
			}
		}
	}
}

// TestFailedForkReleasesParent makes the copy of a paused parent's files
// fail and checks that Fork returns the error and leaves the parent
// unlocked: a delete after it goes through.
func TestFailedForkReleasesParent(t *testing.T) {
	m, _, st := newFakeManager(t)
	m.cfg.Runtimes[ClassGVisor] = fakeGVisor{&fakeRuntime{containers: map[string]runtime.Status{}}}
	ctx := auth.System(context.Background(), "test")
	sb := &store.Sandbox{ID: "sbx-parent", State: wire.StatePaused, Spec: store.Spec{Image: "base", Class: ClassGVisor}}
	if err := st.CreateSandbox(ctx, sb); err != nil {
		t.Fatal(err)
	}
	upper := m.dirsOf(sb.ID).upper // a file where the directory should be
	if err := os.MkdirAll(filepath.Dir(upper), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(upper, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Fork(ctx, sb.ID, wire.ForkRequest{}); err == nil {
		t.Fatal("fork of a parent whose files cannot be read succeeded")
	}
	deleted := make(chan error, 1)
	go func() { _, err := m.Delete(ctx, sb.ID, true); deleted <- err }()
	select {
	case err := <-deleted:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("delete after a failed fork still waits for the parent's lock")
	}
}
