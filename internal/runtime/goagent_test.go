package runtime_test

import (
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/sbxhq/sbx/internal/runtime"
)

// TestRuncGoAgent runs this test binary as the agent, the way sbx runs itself:
// bind-mounted at AgentPath with the default command line. It checks that a
// Go program (threads, fork/exec, signals) works under the seccomp profile.
func TestRuncGoAgent(t *testing.T) {
	needsRunc(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if f, err := elf.Open(self); err != nil {
		t.Fatal(err)
	} else {
		dynamic := slices.ContainsFunc(f.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_INTERP })
		f.Close()
		if dynamic {
			t.Skip("test binary is dynamically linked; build with CGO_ENABLED=0")
		}
	}
	ctx := context.Background()
	r := newTestRunc(t, nil) // the default agent command line
	inst := newTestInstance(t, r)
	inst.AgentBinary = self
	inst.Env = []string{"SBX_RUNC_TEST_INSIDE=1"}

	st, err := r.Start(ctx, inst)
	if err != nil {
		t.Fatal(err)
	}
	exited, err := runtime.WatchExit(context.Background(), st.Pid)
	if err != nil {
		t.Fatal(err)
	}
	log := func() string { b, _ := os.ReadFile(inst.LogPath); return string(b) }
	waitFor(t, "the agent to report", func() bool {
		return strings.Contains(log(), "inside ok") || strings.Contains(log(), "inside failed")
	})
	if l := log(); !strings.Contains(l, "inside ok") {
		t.Fatalf("agent log:\n%s", l)
	}
	if err := r.Kill(ctx, inst.ID, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-exited
	if err := r.Delete(ctx, inst.ID); err != nil {
		t.Fatal(err)
	}
	assertGone(t, r, inst.ID, st.Pid)
}

// insideAgent is what the test binary does as PID 1 of the container.
func insideAgent() int {
	fail := func(format string, args ...any) int {
		fmt.Printf("inside failed: "+format+"\n", args...)
		return 1
	}
	want := []string{runtime.AgentPath, "agent", "--socket", runtime.RunPath + "/" + runtime.AgentSock}
	if !slices.Equal(os.Args, want) {
		return fail("args %q, want %q", os.Args, want)
	}
	if os.Getpid() != 1 {
		return fail("pid %d", os.Getpid())
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)

	// New OS threads: clone with thread flags must pass the filter.
	var wg sync.WaitGroup
	for range 2 * goruntime.NumCPU() {
		wg.Go(func() {
			goruntime.LockOSThread() // never unlocked: the thread exits with the goroutine
		})
	}
	wg.Wait()
	// fork/exec and pipes.
	out, err := exec.Command("/bin/busybox", "echo", "child").Output()
	if err != nil || strings.TrimSpace(string(out)) != "child" {
		return fail("exec: %v: %q", err, out)
	}
	// A process the agent signals and reaps.
	cmd := exec.Command("/bin/busybox", "sleep", "1000")
	if err := cmd.Start(); err != nil {
		return fail("start: %v", err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return fail("signal: %v", err)
	}
	_ = cmd.Wait()
	fmt.Println("inside ok")
	<-term
	return 0
}
