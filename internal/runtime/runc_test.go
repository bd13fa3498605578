package runtime_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/runtime/runtimetest"
)

// The tests run real containers: root, runc on PATH, /bin/busybox static.
// Each test has its own runc root and a unique container id; containers run
// busybox through WithArgs.

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

// newTestInstance is runtimetest.NewInstance for a runc.
func newTestInstance(t *testing.T, r *runtime.Runc) *runtime.Instance {
	return runtimetest.NewInstance(t, r)
}

func newTestRunc(t *testing.T, args []string) *runtime.Runc {
	t.Helper()
	r, err := runtime.NewRunc(filepath.Join(t.TempDir(), "runc"), runtime.WithArgs(args))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// execIn runs a command in the container and returns its combined output.
func execIn(r *runtime.Runc, id string, args ...string) (string, error) {
	out, err := exec.Command(runtime.RuncBinary(r), append([]string{"--root", runtime.RuncRoot(r), "exec", id}, args...)...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func mustExec(t *testing.T, r *runtime.Runc, id string, args ...string) string {
	t.Helper()
	out, err := execIn(r, id, args...)
	if err != nil {
		t.Fatalf("exec %q: %v: %s", args, err, out)
	}
	return out
}

var waitFor = runtimetest.WaitFor

// assertGone is runtimetest.AssertGone, and runc keeps no state of id.
func assertGone(t *testing.T, r *runtime.Runc, id string, pid int) {
	t.Helper()
	runtimetest.AssertGone(t, r, id, pid)
	if _, err := os.Stat(filepath.Join(runtime.RuncRoot(r), id)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("runc state dir: %v", err)
	}
}

// The Runtime contract (runtimetest), and runc's own behaviour below.
func TestRunc(t *testing.T) {
	needsRunc(t)
	runtimetest.Run(t, func(t *testing.T, init []string) runtime.Runtime { return newTestRunc(t, init) })
}

// An instance that runs as runc makes it: its hostname, limits,
// capabilities, seccomp and mounts, its output in the log file, and its
// init's exit.
func TestRuncLifecycle(t *testing.T) {
	needsRunc(t)
	ctx := context.Background()
	r := newTestRunc(t, trapTERM)
	inst := newTestInstance(t, r)

	st, err := r.Start(ctx, inst)
	if err != nil {
		t.Fatal(err)
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
			"/sys/fs/cgroup/memory/memory.limit_in_bytes": strconv.Itoa(256 << 20),
			"/sys/fs/cgroup/pids/pids.max":                "100",
			"/sys/fs/cgroup/cpu/cpu.cfs_quota_us":         "50000",
		}
		if runtime.CgroupV2() {
			files = map[string]string{
				"/sys/fs/cgroup/memory.max": strconv.Itoa(256 << 20),
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
		if out, err := execIn(r, inst.ID, "/bin/busybox", "sh", "-c", "echo x >> "+runtime.AgentPath); err == nil {
			t.Errorf("agent binary is writable: %s", out)
		}
		mustExec(t, r, inst.ID, "/bin/busybox", "touch", runtime.RunPath+"/hello")
		if _, err := os.Stat(filepath.Join(inst.RunDir, "hello")); err != nil {
			t.Errorf("run dir is not shared with the host: %v", err)
		}
	})

	exited, err := runtime.WatchExit(context.Background(), st.Pid)
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

// A start that fails after runc made the cgroup and the container state
// leaves nothing (a missing binary and bad input are in the suite).
func TestRuncStartFailureLeavesNothing(t *testing.T) {
	needsRunc(t)
	r := newTestRunc(t, []string{"/bin/busybox", "sleep", "1000"})
	inst := newTestInstance(t, r)
	inst.RootfsDir = filepath.Join(t.TempDir(), "empty")
	if err := os.Mkdir(inst.RootfsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Start(context.Background(), inst); err == nil {
		t.Fatal("Start with an empty rootfs succeeded")
	}
	assertGone(t, r, inst.ID, 0)
}

// The daemon can be SIGKILLed (its whole process group) without taking the
// instance along: a helper process starts the container and is killed.
func TestRuncSurvivesDaemonKill(t *testing.T) {
	needsRunc(t)
	ctx := context.Background()
	r := newTestRunc(t, trapTERM)
	inst := newTestInstance(t, r)

	cfg, err := json.Marshal(helperConfig{Root: runtime.RuncRoot(r), Args: runtime.RuncArgs(r), Inst: inst})
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
	Inst *runtime.Instance
}

// startHelper plays the daemon: it starts the container, prints its pid and
// waits to be killed.
func startHelper() {
	var cfg helperConfig
	if err := json.Unmarshal([]byte(os.Getenv("SBX_RUNC_TEST_HELPER")), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	r, err := runtime.NewRunc(cfg.Root, runtime.WithArgs(cfg.Args))
	if err == nil {
		var st runtime.Status
		st, err = r.Start(context.Background(), cfg.Inst)
		fmt.Println(st.Pid)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
}
