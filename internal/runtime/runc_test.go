package runtime

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/errdefs"
)

// The tests run real containers: root, runc on PATH, /bin/busybox static.
// Each test has its own runc root and a unique container id. The agent does
// not exist yet, so containers run busybox through WithArgs.

// trapTERM is an init that exits cleanly on SIGTERM (as PID 1 it would
// otherwise ignore it) and says when it is up.
var trapTERM = []string{"/bin/busybox", "sh", "-c", `echo started; trap "exit 0" TERM; sleep 1000 & wait`}

func TestMain(m *testing.M) {
	if os.Getenv("SBX_RUNC_TEST_HELPER") != "" {
		startHelper()
		return
	}
	if os.Getenv("SBX_RUNC_TEST_INSIDE") != "" {
		os.Exit(insideAgent())
	}
	os.Exit(m.Run())
}

func needsRunc(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if _, err := exec.LookPath("runc"); err != nil {
		t.Skip("needs runc")
	}
	if _, err := os.Stat("/bin/busybox"); err != nil {
		t.Skip("needs /bin/busybox")
	}
}

// newTestInstance makes a busybox rootfs and an instance with limits. Its
// cleanup deletes the container in case the test did not.
func newTestInstance(t *testing.T, r *Runc) *Instance {
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
	inst := &Instance{
		ID:          "sbxtest-" + hex.EncodeToString(b),
		BundleDir:   filepath.Join(dir, "bundle"),
		RootfsDir:   rootfs,
		AgentBinary: "/bin/busybox", // any static file will do as the bind source
		RunDir:      filepath.Join(dir, "run"),
		LogPath:     filepath.Join(dir, "instance.log"),
		Hostname:    "sbx-test-host",
		CPU:         0.5,
		MemoryMiB:   64,
		PidsLimit:   100,
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

func newTestRunc(t *testing.T, args []string) *Runc {
	t.Helper()
	r, err := NewRunc(filepath.Join(t.TempDir(), "runc"), WithArgs(args))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// execIn runs a command in the container and returns its combined output.
func execIn(r *Runc, id string, args ...string) (string, error) {
	out, err := exec.Command(r.binary, append([]string{"--root", r.root, "exec", id}, args...)...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func mustExec(t *testing.T, r *Runc, id string, args ...string) string {
	t.Helper()
	out, err := execIn(r, id, args...)
	if err != nil {
		t.Fatalf("exec %q: %v: %s", args, err, out)
	}
	return out
}

// waitFor polls cond until it holds or a generous deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// assertGone checks that nothing of the container is left: no runc state, no
// cgroup in any hierarchy, no process.
func assertGone(t *testing.T, r *Runc, id string, pid int) {
	t.Helper()
	ctx := context.Background()
	if _, err := r.State(ctx, id); !errdefs.Is(err, errdefs.KindNotFound) || errdefs.CodeOf(err) != "INSTANCE_NOT_FOUND" {
		t.Errorf("State after delete: %v, want INSTANCE_NOT_FOUND", err)
	}
	ids, err := r.List(ctx)
	if err != nil || slices.Contains(ids, id) {
		t.Errorf("List = %v, %v; want no %s", ids, err, id)
	}
	if _, err := os.Stat(filepath.Join(r.root, id)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("runc state dir: %v", err)
	}
	mounts, err := cgroupMounts()
	if err != nil || len(mounts) == 0 {
		t.Fatalf("cgroup mounts %v: %v", mounts, err)
	}
	for _, m := range mounts {
		if _, err := os.Stat(filepath.Join(m, "sbx", id)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("cgroup %s/sbx/%s left behind: %v", m, id, err)
		}
	}
	if pid > 0 {
		// Dead, or a zombie waiting for the host's init to reap it.
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err == nil && !strings.Contains(string(stat), ") Z ") {
			t.Errorf("process %d still runs: %s", pid, stat)
		}
	}
}

func TestRuncLifecycle(t *testing.T) {
	needsRunc(t)
	ctx := context.Background()
	r := newTestRunc(t, trapTERM)
	inst := newTestInstance(t, r)

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

	// stdio is the log file, not a pipe.
	for _, fd := range []string{"1", "2"} {
		if link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", st.Pid, fd)); err != nil || link != inst.LogPath {
			t.Errorf("fd %s -> %q, %v; want %s", fd, link, err, inst.LogPath)
		}
	}
	waitFor(t, "init to log", func() bool {
		b, _ := os.ReadFile(inst.LogPath)
		return strings.Contains(string(b), "started")
	})

	t.Run("hostname", func(t *testing.T) {
		if h := mustExec(t, r, inst.ID, "/bin/busybox", "hostname"); h != "sbx-test-host" {
			t.Errorf("hostname %q", h)
		}
	})
	t.Run("cgroup limits", func(t *testing.T) {
		files := map[string]string{
			"/sys/fs/cgroup/memory/memory.limit_in_bytes": strconv.Itoa(64 << 20),
			"/sys/fs/cgroup/pids/pids.max":                "100",
			"/sys/fs/cgroup/cpu/cpu.cfs_quota_us":         "50000",
		}
		if cgroupV2() {
			files = map[string]string{
				"/sys/fs/cgroup/memory.max": strconv.Itoa(64 << 20),
				"/sys/fs/cgroup/pids.max":   "100",
				"/sys/fs/cgroup/cpu.max":    "50000 100000",
			}
		}
		for f, want := range files {
			if got := mustExec(t, r, inst.ID, "/bin/busybox", "cat", f); got != want {
				t.Errorf("%s = %q, want %q", f, got, want)
			}
		}
	})
	t.Run("capabilities and seccomp", func(t *testing.T) {
		status := mustExec(t, r, inst.ID, "/bin/busybox", "cat", "/proc/1/status")
		var want uint64
		for _, c := range []int{unix.CAP_CHOWN, unix.CAP_DAC_OVERRIDE, unix.CAP_FSETID, unix.CAP_FOWNER,
			unix.CAP_SETGID, unix.CAP_SETUID, unix.CAP_SETFCAP, unix.CAP_SETPCAP, unix.CAP_NET_BIND_SERVICE,
			unix.CAP_SYS_CHROOT, unix.CAP_KILL, unix.CAP_AUDIT_WRITE} {
			want |= 1 << c
		}
		for _, line := range []string{
			fmt.Sprintf("CapEff:\t%016x", want),
			fmt.Sprintf("CapBnd:\t%016x", want),
			"CapAmb:\t0000000000000000",
			"NoNewPrivs:\t1",
			"Seccomp:\t2",
		} {
			if !strings.Contains(status, line+"\n") {
				t.Errorf("/proc/1/status lacks %q:\n%s", line, status)
			}
		}
	})
	t.Run("denied", func(t *testing.T) {
		out, err := execIn(r, inst.ID, "/bin/busybox", "ping", "-c1", "127.0.0.1")
		if err == nil || !strings.Contains(strings.ToLower(out), "permission denied") && !strings.Contains(out, "not permitted") {
			t.Errorf("ping: %v: %s; want a permission error", err, out)
		}
		out, err = execIn(r, inst.ID, "/bin/busybox", "mount", "-t", "tmpfs", "tmpfs", "/tmp")
		if err == nil {
			t.Errorf("mount succeeded: %s", out)
		}
		// unshare needs no capability for a user namespace; only seccomp stops it.
		out, err = execIn(r, inst.ID, "/bin/busybox", "unshare", "-U", "/bin/busybox", "true")
		if err == nil || !strings.Contains(out, "not permitted") {
			t.Errorf("unshare -U: %v: %s; want EPERM", err, out)
		}
	})
	t.Run("agent mounts", func(t *testing.T) {
		if out, err := execIn(r, inst.ID, "/bin/busybox", "sh", "-c", "echo x >> "+AgentPath); err == nil {
			t.Errorf("agent binary is writable: %s", out)
		}
		mustExec(t, r, inst.ID, "/bin/busybox", "touch", RunPath+"/hello")
		if _, err := os.Stat(filepath.Join(inst.RunDir, "hello")); err != nil {
			t.Errorf("run dir is not shared with the host: %v", err)
		}
	})

	exited, err := WatchExit(context.Background(), st.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Kill(ctx, inst.ID, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-exited
	waitFor(t, "runc to see the exit", func() bool {
		got, err := r.State(ctx, inst.ID)
		return err == nil && !got.Running && got.Pid == 0
	})
	if err := r.Kill(ctx, inst.ID, syscall.SIGKILL); err != nil {
		t.Errorf("Kill of a stopped container: %v", err)
	}

	if err := r.Delete(ctx, inst.ID); err != nil {
		t.Fatal(err)
	}
	assertGone(t, r, inst.ID, st.Pid)
	if err := r.Delete(ctx, inst.ID); err != nil {
		t.Errorf("second Delete: %v", err)
	}
	if err := r.Kill(ctx, inst.ID, syscall.SIGTERM); err != nil {
		t.Errorf("Kill of a missing container: %v", err)
	}
}

// Delete of a running container kills it.
func TestRuncDeleteRunning(t *testing.T) {
	needsRunc(t)
	ctx := context.Background()
	r := newTestRunc(t, []string{"/bin/busybox", "sleep", "1000"})
	inst := newTestInstance(t, r)
	st, err := r.Start(ctx, inst)
	if err != nil {
		t.Fatal(err)
	}
	// A second process, so the cgroup holds more than init.
	if out, err := execIn(r, inst.ID, "/bin/busybox", "sh", "-c", "sleep 1000 >/dev/null 2>&1 &"); err != nil {
		t.Fatalf("exec: %v: %s", err, out)
	}
	if err := r.Delete(ctx, inst.ID); err != nil {
		t.Fatal(err)
	}
	assertGone(t, r, inst.ID, st.Pid)
}

func TestRuncStartFailureLeavesNothing(t *testing.T) {
	needsRunc(t)
	ctx := context.Background()

	t.Run("missing binary", func(t *testing.T) {
		r := newTestRunc(t, []string{"/bin/no-such-program"})
		inst := newTestInstance(t, r)
		_, err := r.Start(ctx, inst)
		if err == nil || !strings.Contains(err.Error(), "no-such-program") {
			t.Fatalf("Start: %v; want runc's error naming the program", err)
		}
		assertGone(t, r, inst.ID, 0)
	})
	t.Run("empty rootfs", func(t *testing.T) {
		// Fails after runc made the cgroup and the container state.
		r := newTestRunc(t, []string{"/bin/busybox", "sleep", "1000"})
		inst := newTestInstance(t, r)
		inst.RootfsDir = filepath.Join(t.TempDir(), "empty")
		if err := os.Mkdir(inst.RootfsDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Start(ctx, inst); err == nil {
			t.Fatal("Start with an empty rootfs succeeded")
		}
		assertGone(t, r, inst.ID, 0)
	})
	t.Run("bad input", func(t *testing.T) {
		r := newTestRunc(t, nil)
		inst := newTestInstance(t, r)
		inst.MemoryMiB = -1
		if _, err := r.Start(ctx, inst); !errdefs.Is(err, errdefs.KindInvalid) {
			t.Fatalf("Start: %v, want Invalid", err)
		}
		if _, err := os.Stat(inst.BundleDir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("bundle dir made for bad input: %v", err)
		}
		assertGone(t, r, inst.ID, 0)
	})
}

// The daemon can be SIGKILLed (its whole process group) without taking the
// instance along: a helper process starts the container and is killed.
func TestRuncSurvivesDaemonKill(t *testing.T) {
	needsRunc(t)
	ctx := context.Background()
	r := newTestRunc(t, trapTERM)
	inst := newTestInstance(t, r)

	cfg, err := json.Marshal(helperConfig{Root: r.root, Args: r.args, Inst: inst})
	if err != nil {
		t.Fatal(err)
	}
	helper := exec.Command(os.Args[0])
	helper.Env = append(os.Environ(), "SBX_RUNC_TEST_HELPER="+string(cfg))
	helper.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	helper.Stderr = os.Stderr
	stdin, err := helper.StdinPipe() // held open: the helper blocks on it
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = helper.Process.Kill()
		_ = helper.Wait()
		t.Fatalf("helper: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		_ = helper.Process.Kill()
		_ = helper.Wait()
		t.Fatalf("helper said %q", line)
	}

	if err := syscall.Kill(-helper.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()

	st, err := r.State(ctx, inst.ID)
	if err != nil || !st.Running || st.Pid != pid {
		t.Fatalf("after daemon kill: %+v, %v; want running pid %d", st, err, pid)
	}
	if out := mustExec(t, r, inst.ID, "/bin/busybox", "echo", "alive"); out != "alive" {
		t.Errorf("exec after daemon kill: %q", out)
	}
	if err := r.Delete(ctx, inst.ID); err != nil {
		t.Fatal(err)
	}
	assertGone(t, r, inst.ID, pid)
}

type helperConfig struct {
	Root string
	Args []string
	Inst *Instance
}

// startHelper plays the daemon: it starts the container, prints its pid and
// waits to be killed.
func startHelper() {
	var cfg helperConfig
	if err := json.Unmarshal([]byte(os.Getenv("SBX_RUNC_TEST_HELPER")), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	r, err := NewRunc(cfg.Root, WithArgs(cfg.Args))
	if err == nil {
		var st Status
		st, err = r.Start(context.Background(), cfg.Inst)
		fmt.Println(st.Pid)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
}
