package runtime_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/runtime/runtimetest"
	"github.com/sbxhq/sbx/wire"
)

func needsRunsc(t *testing.T) {
	t.Helper()
	needsRunc(t) // root and busybox
	if _, err := exec.LookPath("runsc"); err != nil {
		t.Skip("needs runsc")
	}
}

func newTestRunsc(t *testing.T, args []string) *runtime.Runsc {
	t.Helper()
	root := filepath.Join(t.TempDir(), "runsc")
	r, err := runtime.NewRunsc(root, runtime.WithArgs(args))
	if err != nil {
		t.Fatal(err)
	}
	// Current runsc releases pin an empty network namespace for their
	// gofers at <root>/null-netns, which must go before the root can be
	// removed: Close, once the test's instances are deleted, must leave no
	// mount under the root.
	t.Cleanup(func() {
		if err := r.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
		if mi, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(mi), " "+root+"/") {
			t.Errorf("a mount under %s remains after Close", root)
		}
	})
	return r
}

// The Runtime contract (runtimetest), and runsc's own behaviour below.
func TestRunsc(t *testing.T) {
	needsRunsc(t)
	runtimetest.Run(t, func(t *testing.T, init []string) runtime.Runtime { return newTestRunsc(t, init) })
}

// The memory limit is on the cgroup that holds gVisor's host processes.
func TestRunscMemoryLimit(t *testing.T) {
	needsRunsc(t)
	r := newTestRunsc(t, runtimetest.Counter)
	inst := runtimetest.NewInstance(t, r)
	if _, err := r.Start(context.Background(), inst); err != nil {
		t.Fatal(err)
	}
	limit, err := os.ReadFile("/sys/fs/cgroup/memory/sbx/" + inst.ID + "/memory.limit_in_bytes")
	if err == nil && strings.TrimSpace(string(limit)) != strconv.Itoa(256<<20) {
		t.Errorf("memory limit %s, want %d", limit, 256<<20)
	}
}

// TestRunscCheckpointRestore checkpoints a counter and restores it twice: in
// place (pause/resume) and as a new instance with its own id, bundle, rootfs
// and run directory (a fork). Both go on counting from the saved value.
func TestRunscCheckpointRestore(t *testing.T) {
	needsRunsc(t)
	ctx := context.Background()
	r := newTestRunsc(t, runtimetest.Counter)
	inst := runtimetest.NewInstance(t, r)
	st, err := r.Start(ctx, inst)
	if err != nil {
		t.Fatal(err)
	}
	runtimetest.WaitFor(t, "the counter", func() bool { return runtimetest.Count(inst.RunDir) >= 5 })

	image := filepath.Join(t.TempDir(), "checkpoint")
	if err := r.Checkpoint(ctx, inst.ID, image); err != nil {
		t.Fatal(err)
	}
	saved := runtimetest.Count(inst.RunDir)
	if _, err := os.Stat(image + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary image dir left: %v", err)
	}
	// The instance is gone: no process, no cgroup.
	if err := r.Delete(ctx, inst.ID); err != nil {
		t.Fatal(err)
	}
	runtimetest.AssertGone(t, r, inst.ID, st.Pid)

	// Restore in place.
	if _, err := r.Restore(ctx, inst, image); err != nil {
		t.Fatal(err)
	}
	runtimetest.WaitFor(t, "the restored counter", func() bool { return runtimetest.Count(inst.RunDir) > saved })
	if n := runtimetest.Count(inst.RunDir); n > saved+1000 {
		t.Errorf("count %d after restore from %d", n, saved)
	}

	// Restore as another instance.
	fork := runtimetest.NewInstance(t, r)
	if _, err := r.Restore(ctx, fork, image); err != nil {
		t.Fatal(err)
	}
	runtimetest.WaitFor(t, "the fork's counter", func() bool { return runtimetest.Count(fork.RunDir) > 0 })
	if n := runtimetest.Count(fork.RunDir); n <= saved {
		t.Errorf("fork counts from %d, want more than the saved %d (a fresh start counts from 1)", n, saved)
	}

	// A restore from nothing is refused before anything is made.
	other := runtimetest.NewInstance(t, r)
	if _, err := r.Restore(ctx, other, t.TempDir()); !errdefs.Is(err, errdefs.KindInvalid) {
		t.Errorf("Restore from an empty dir: %v, want Invalid", err)
	}

	// The image names the runsc that saved it, and another runsc refuses
	// it with a conflict that says what to do, before starting anything.
	recorded, err := os.ReadFile(filepath.Join(image, runtime.ImageVersionFile))
	if err != nil || strings.TrimSpace(string(recorded)) != r.Version() {
		t.Fatalf("recorded runsc %q (%v), want %q", recorded, err, r.Version())
	}
	if v := r.Version(); v == "" || strings.Contains(v, "VERSION_MISSING") || v == "unknown" {
		t.Errorf("Version() = %q, want the gVisor version", v)
	}
	if err := os.WriteFile(filepath.Join(image, runtime.ImageVersionFile), []byte("release-20200101.0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = r.Restore(ctx, other, image)
	if !errdefs.Is(err, errdefs.KindConflict) || errdefs.CodeOf(err) != wire.CodeMemoryImageRunsc || !strings.Contains(err.Error(), "--runsc") {
		t.Errorf("Restore of another runsc's image: %v, want conflict %s naming --runsc", err, wire.CodeMemoryImageRunsc)
	}
	runtimetest.AssertGone(t, r, other.ID, 0)
}
