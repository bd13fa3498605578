// Package runtimetest is the conformance suite of runtime.Runtime (and of
// runtime.Freezer where an implementation has it): the contract in
// internal/runtime/runtime.go, checked against real containers. Each
// implementation's tests call Run; NewInstance and AssertGone serve their
// own tests too.
//
// The tests need root, the runtime's binary and a static /bin/busybox,
// which the instances run through runtime.WithArgs.
package runtimetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/wire"
)

// New returns a fresh runtime (its own root) whose instances run init.
type New func(t *testing.T, init []string) runtime.Runtime

// Counter is an init that counts in a shell variable and publishes the
// count in the run directory, which the host sees (Count reads it).
var Counter = []string{"/bin/busybox", "sh", "-c",
	`i=0; while :; do i=$((i+1)); echo $i > /.sbx/run/count.tmp; mv /.sbx/run/count.tmp /.sbx/run/count; sleep 0.05; done`}

// Run checks the contract against runtimes made by newRuntime.
func Run(t *testing.T, newRuntime New) {
	t.Run("Lifecycle", func(t *testing.T) { lifecycle(t, newRuntime(t, Counter)) })
	t.Run("StartFailureLeavesNothing", func(t *testing.T) { startFailure(t, newRuntime(t, []string{"/no/such/binary"})) })
	t.Run("BadInput", func(t *testing.T) { badInput(t, newRuntime(t, Counter)) })
	t.Run("Freezer", func(t *testing.T) { freezer(t, newRuntime(t, Counter)) })
}

// NewInstance makes an instance over its own busybox rootfs, with limits;
// its cleanup deletes it.
func NewInstance(t *testing.T, r runtime.Runtime) *runtime.Instance {
	t.Helper()
	dir := t.TempDir()
	rootfs := filepath.Join(dir, "rootfs")
	for _, d := range []string{"bin", "tmp", "proc", "sys", "dev"} {
		if err := os.MkdirAll(filepath.Join(rootfs, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile("/bin/busybox")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rootfs, "bin/busybox"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, applet := range []string{"sh", "sleep", "cat", "echo", "true"} {
		if err := os.Symlink("busybox", filepath.Join(rootfs, "bin", applet)); err != nil {
			t.Fatal(err)
		}
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	inst := &runtime.Instance{
		ID:          "sbxtest-" + hex.EncodeToString(b),
		BundleDir:   filepath.Join(dir, "bundle"),
		RootfsDir:   rootfs,
		AgentBinary: "/bin/busybox", // any static file will do as the bind source
		RunDir:      filepath.Join(dir, "run"),
		LogPath:     filepath.Join(dir, "instance.log"),
		Hostname:    "sbx-test-host",
		CPU:         0.5,
		MemoryMiB:   256,
		PidsLimit:   100,
	}
	t.Cleanup(func() {
		if err := r.Delete(context.Background(), inst.ID); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		if err := runtime.UnmountRunDir(inst.RunDir); err != nil { // Start made it a tmpfs
			t.Errorf("cleanup: %v", err)
		}
	})
	return inst
}

// AssertGone checks that nothing of instance id is left: the runtime does
// not know it, no cgroup holds it, and its init (pid, if known) is dead or
// a zombie waiting for the host's init.
func AssertGone(t *testing.T, r runtime.Runtime, id string, pid int) {
	t.Helper()
	ctx := context.Background()
	if _, err := r.State(ctx, id); !errdefs.Is(err, errdefs.KindNotFound) || errdefs.CodeOf(err) != wire.CodeInstanceNotFound {
		t.Errorf("State after delete: %v, want INSTANCE_NOT_FOUND", err)
	}
	if ids, err := r.List(ctx); err != nil || slices.Contains(ids, id) {
		t.Errorf("List = %v, %v; want no %s", ids, err, id)
	}
	if dirs, err := runtime.CgroupDirs(id); err != nil || len(dirs) > 0 {
		t.Errorf("cgroups left behind: %v, %v", dirs, err)
	}
	if pid > 0 {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err == nil && !strings.Contains(string(stat), ") Z ") {
			t.Errorf("process %d still runs: %s", pid, stat)
		}
	}
}

// Count reads what Counter published in runDir (0 before it has).
func Count(runDir string) int {
	b, err := os.ReadFile(filepath.Join(runDir, "count"))
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// WaitFor polls cond until it holds. It sets no deadline of its own: go
// test's -timeout ends a wait that never ends, with every stack, and what
// names the wait in the stack.
func WaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		time.Sleep(10 * time.Millisecond)
	}
}

// Start, a refused second Start, State, List, Delete of a running
// instance, and the idempotent Delete and Kill of a missing one.
func lifecycle(t *testing.T, r runtime.Runtime) {
	ctx := context.Background()
	inst := NewInstance(t, r)
	st, err := r.Start(ctx, inst)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Running || st.Pid <= 0 || st.ID != inst.ID {
		t.Fatalf("Start = %+v", st)
	}
	if got, err := r.State(ctx, inst.ID); err != nil || got != st {
		t.Fatalf("State = %+v, %v; want %+v", got, err, st)
	}
	if ids, err := r.List(ctx); err != nil || !slices.Equal(ids, []string{inst.ID}) {
		t.Fatalf("List = %v, %v", ids, err)
	}
	if _, err := r.Start(ctx, inst); !errdefs.Is(err, errdefs.KindConflict) {
		t.Fatalf("second Start: %v, want Conflict", err)
	}
	if got, err := r.State(ctx, inst.ID); err != nil || got != st {
		t.Fatalf("second Start disturbed the first: %+v, %v", got, err)
	}
	WaitFor(t, "the counter", func() bool { return Count(inst.RunDir) >= 3 }) // the run directory is shared
	if err := r.Delete(ctx, inst.ID); err != nil {
		t.Fatal(err)
	}
	AssertGone(t, r, inst.ID, st.Pid)
	if err := r.Delete(ctx, inst.ID); err != nil {
		t.Errorf("second Delete: %v", err)
	}
	if err := r.Kill(ctx, inst.ID, syscall.SIGKILL); err != nil {
		t.Errorf("Kill of a missing instance: %v", err)
	}
}

// A Start that fails leaves nothing behind.
func startFailure(t *testing.T, r runtime.Runtime) {
	inst := NewInstance(t, r)
	if _, err := r.Start(context.Background(), inst); err == nil {
		t.Fatal("Start of a missing binary succeeded")
	}
	AssertGone(t, r, inst.ID, 0)
}

// Bad limits are refused before anything is made.
func badInput(t *testing.T, r runtime.Runtime) {
	inst := NewInstance(t, r)
	inst.MemoryMiB = -1
	if _, err := r.Start(context.Background(), inst); !errdefs.Is(err, errdefs.KindInvalid) {
		t.Fatalf("Start with a negative memory limit: %v, want Invalid", err)
	}
	if _, err := os.Stat(inst.BundleDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("bundle dir made for bad input: %v", err)
	}
	AssertGone(t, r, inst.ID, 0)
}

// A paused instance stops where it is and goes on after Resume.
func freezer(t *testing.T, r runtime.Runtime) {
	f, ok := r.(runtime.Freezer)
	if !ok {
		t.Skipf("%T cannot pause", r)
	}
	ctx := context.Background()
	inst := NewInstance(t, r)
	if _, err := r.Start(ctx, inst); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, "the counter", func() bool { return Count(inst.RunDir) >= 3 })
	if err := f.Pause(ctx, inst.ID); err != nil {
		t.Fatal(err)
	}
	if p, err := f.Paused(ctx, inst.ID); err != nil || !p {
		t.Fatalf("Paused = %v, %v", p, err)
	}
	frozen := Count(inst.RunDir)
	time.Sleep(300 * time.Millisecond) // an observation window, not a wait for a condition
	if n := Count(inst.RunDir); n != frozen {
		t.Errorf("counter moved while paused: %d -> %d", frozen, n)
	}
	if err := f.Resume(ctx, inst.ID); err != nil {
		t.Fatal(err)
	}
	if p, err := f.Paused(ctx, inst.ID); err != nil || p {
		t.Errorf("Paused after Resume = %v, %v", p, err)
	}
	WaitFor(t, "the counter after resume", func() bool { return Count(inst.RunDir) > frozen })
	if err := f.Resume(ctx, inst.ID); err != nil {
		t.Errorf("Resume of a running instance: %v", err)
	}
	if _, err := f.Paused(ctx, "sbxtest-missing"); !errdefs.Is(err, errdefs.KindNotFound) {
		t.Errorf("Paused of a missing instance: %v, want NotFound", err)
	}
	if err := f.Pause(ctx, "sbxtest-missing"); !errdefs.Is(err, errdefs.KindNotFound) {
		t.Errorf("Pause of a missing instance: %v, want NotFound", err)
	}
}
