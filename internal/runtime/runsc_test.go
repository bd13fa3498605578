package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/sdk"
)

// counterInit counts in a shell variable and publishes the count in the run
// directory, which the host sees. A restored instance goes on from where the
// variable was; a fresh one would start at 1.
var counterInit = []string{"/bin/busybox", "sh", "-c",
	`i=0; while :; do i=$((i+1)); echo $i > /.sbx/run/count.tmp; mv /.sbx/run/count.tmp /.sbx/run/count; sleep 0.05; done`}

func needsRunsc(t *testing.T) {
	t.Helper()
	needsRunc(t) // root and busybox
	if _, err := exec.LookPath("runsc"); err != nil {
		t.Skip("needs runsc")
	}
}

func newTestRunsc(t *testing.T, args []string) *Runsc {
	t.Helper()
	root := filepath.Join(t.TempDir(), "runsc")
	r, err := NewRunsc(root, WithArgs(args))
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

// newRunscInstance makes an instance over its own busybox rootfs; its
// cleanup deletes the instance.
func newRunscInstance(t *testing.T, r *Runsc) *Instance {
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
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	inst := &Instance{
		ID:          "sbxtest-" + hex.EncodeToString(b),
		BundleDir:   filepath.Join(dir, "bundle"),
		RootfsDir:   rootfs,
		AgentBinary: "/bin/busybox", // any static file will do as the bind source
		RunDir:      filepath.Join(dir, "run"),
		LogPath:     filepath.Join(dir, "instance.log"),
		CPU:         1,
		MemoryMiB:   256,
	}
	t.Cleanup(func() {
		if err := r.Delete(context.Background(), inst.ID); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		if err := UnmountRunDir(inst.RunDir); err != nil { // Start made it a tmpfs
			t.Errorf("cleanup: %v", err)
		}
	})
	return inst
}

func readCount(t *testing.T, runDir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(runDir, "count"))
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

func TestRunscLifecycle(t *testing.T) {
	needsRunsc(t)
	ctx := context.Background()
	r := newTestRunsc(t, counterInit)
	inst := newRunscInstance(t, r)

	st, err := r.Start(ctx, inst)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Running || st.Pid <= 0 {
		t.Fatalf("Start = %+v", st)
	}
	if _, err := r.Start(ctx, inst); !errdefs.Is(err, errdefs.KindConflict) {
		t.Fatalf("second Start: %v, want Conflict", err)
	}
	if st2, err := r.State(ctx, inst.ID); err != nil || st2 != st {
		t.Fatalf("second Start disturbed the first: %+v, %v", st2, err)
	}
	if ids, err := r.List(ctx); err != nil || !slices.Equal(ids, []string{inst.ID}) {
		t.Fatalf("List = %v, %v", ids, err)
	}
	waitFor(t, "the counter", func() bool { return readCount(t, inst.RunDir) >= 3 })

	// The memory limit is on the cgroup that holds gVisor's host processes.
	limit, err := os.ReadFile("/sys/fs/cgroup/memory/sbx/" + inst.ID + "/memory.limit_in_bytes")
	if err == nil && strings.TrimSpace(string(limit)) != strconv.Itoa(256<<20) {
		t.Errorf("memory limit %s, want %d", limit, 256<<20)
	}

	// Freeze: the counter stops, then goes on.
	if err := r.Pause(ctx, inst.ID); err != nil {
		t.Fatal(err)
	}
	if p, err := r.Paused(ctx, inst.ID); err != nil || !p {
		t.Fatalf("Paused = %v, %v", p, err)
	}
	frozen := readCount(t, inst.RunDir)
	time.Sleep(300 * time.Millisecond) // an observation window, not a wait for a condition
	if n := readCount(t, inst.RunDir); n != frozen {
		t.Errorf("counter moved while paused: %d -> %d", frozen, n)
	}
	if err := r.Resume(ctx, inst.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the counter after resume", func() bool { return readCount(t, inst.RunDir) > frozen })
	if err := r.Resume(ctx, inst.ID); err != nil {
		t.Errorf("Resume of a running instance: %v", err)
	}

	if err := r.Delete(ctx, inst.ID); err != nil {
		t.Fatal(err)
	}
	assertRunscGone(t, r, inst.ID, st.Pid)
	if err := r.Delete(ctx, inst.ID); err != nil {
		t.Errorf("second Delete: %v", err)
	}
	if err := r.Kill(ctx, inst.ID, syscall.SIGKILL); err != nil {
		t.Errorf("Kill of a missing instance: %v", err)
	}
}

// TestRunscCheckpointRestore checkpoints a counter and restores it twice: in
// place (pause/resume) and as a new instance with its own id, bundle, rootfs
// and run directory (a fork). Both go on counting from the saved value.
func TestRunscCheckpointRestore(t *testing.T) {
	needsRunsc(t)
	ctx := context.Background()
	r := newTestRunsc(t, counterInit)
	inst := newRunscInstance(t, r)
	st, err := r.Start(ctx, inst)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the counter", func() bool { return readCount(t, inst.RunDir) >= 5 })

	image := filepath.Join(t.TempDir(), "checkpoint")
	if err := r.Checkpoint(ctx, inst.ID, image); err != nil {
		t.Fatal(err)
	}
	saved := readCount(t, inst.RunDir)
	if _, err := os.Stat(image + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary image dir left: %v", err)
	}
	// The instance is gone: no process, no cgroup.
	if err := r.Delete(ctx, inst.ID); err != nil {
		t.Fatal(err)
	}
	assertRunscGone(t, r, inst.ID, st.Pid)

	// Restore in place.
	if _, err := r.Restore(ctx, inst, image); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the restored counter", func() bool { return readCount(t, inst.RunDir) > saved })
	if n := readCount(t, inst.RunDir); n > saved+1000 {
		t.Errorf("count %d after restore from %d", n, saved)
	}

	// Restore as another instance.
	fork := newRunscInstance(t, r)
	if _, err := r.Restore(ctx, fork, image); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the fork's counter", func() bool { return readCount(t, fork.RunDir) > 0 })
	if n := readCount(t, fork.RunDir); n <= saved {
		t.Errorf("fork counts from %d, want more than the saved %d (a fresh start counts from 1)", n, saved)
	}

	// A restore from nothing is refused before anything is made.
	other := newRunscInstance(t, r)
	if _, err := r.Restore(ctx, other, t.TempDir()); !errdefs.Is(err, errdefs.KindInvalid) {
		t.Errorf("Restore from an empty dir: %v, want Invalid", err)
	}

	// The image names the runsc that saved it, and another runsc refuses
	// it with a conflict that says what to do, before starting anything.
	recorded, err := os.ReadFile(filepath.Join(image, imageVersionFile))
	if err != nil || strings.TrimSpace(string(recorded)) != r.Version() {
		t.Fatalf("recorded runsc %q (%v), want %q", recorded, err, r.Version())
	}
	if v := r.Version(); v == "" || strings.Contains(v, "VERSION_MISSING") || v == "unknown" {
		t.Errorf("Version() = %q, want the gVisor version", v)
	}
	if err := os.WriteFile(filepath.Join(image, imageVersionFile), []byte("release-20200101.0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = r.Restore(ctx, other, image)
	if !errdefs.Is(err, errdefs.KindConflict) || errdefs.CodeOf(err) != sdk.CodeMemoryImageRunsc || !strings.Contains(err.Error(), "--runsc") {
		t.Errorf("Restore of another runsc's image: %v, want conflict %s naming --runsc", err, sdk.CodeMemoryImageRunsc)
	}
	assertRunscGone(t, r, other.ID, 0)
}

func TestRunscStartFailureLeavesNothing(t *testing.T) {
	needsRunsc(t)
	ctx := context.Background()
	r := newTestRunsc(t, []string{"/no/such/binary"})
	inst := newRunscInstance(t, r)
	if _, err := r.Start(ctx, inst); err == nil {
		t.Fatal("Start of a missing binary succeeded")
	}
	assertRunscGone(t, r, inst.ID, 0)
}

func assertRunscGone(t *testing.T, r *Runsc, id string, pid int) {
	t.Helper()
	ctx := context.Background()
	if _, err := r.State(ctx, id); !errdefs.Is(err, errdefs.KindNotFound) {
		t.Errorf("State after delete: %v, want NotFound", err)
	}
	if ids, err := r.List(ctx); err != nil || slices.Contains(ids, id) {
		t.Errorf("List = %v, %v; want no %s", ids, err, id)
	}
	mounts, err := cgroupMounts()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mounts {
		if _, err := os.Stat(filepath.Join(m, "sbx", id)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("cgroup %s/sbx/%s left behind: %v", m, id, err)
		}
	}
	if pid > 0 {
		if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && !strings.Contains(string(stat), ") Z ") {
			t.Errorf("process %d still runs", pid)
		}
	}
}
