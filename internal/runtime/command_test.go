package runtime

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunToolDiesWithItsCaller starts this test binary as a stand-in daemon
// that runs a long tool command through runTool, kills the stand-in with
// SIGKILL, and checks that the tool command dies with it.
func TestRunToolDiesWithItsCaller(t *testing.T) {
	if pidFile := os.Getenv("SBX_RUNTOOL_PIDFILE"); pidFile != "" {
		// The stand-in daemon: never returns on its own.
		runTool(exec.Command("/bin/sh", "-c", `echo $$ > "$0.tmp" && mv "$0.tmp" "$0" && exec sleep 600`, pidFile))
		os.Exit(1)
	}
	pidFile := filepath.Join(t.TempDir(), "tool.pid")
	daemon := exec.Command(os.Args[0], "-test.run=^TestRunToolDiesWithItsCaller$")
	daemon.Env = append(os.Environ(), "SBX_RUNTOOL_PIDFILE="+pidFile)
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	var tool int
	deadline := time.Now().Add(30 * time.Second)
	for tool == 0 && time.Now().Before(deadline) {
		b, _ := os.ReadFile(pidFile)
		tool, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		time.Sleep(10 * time.Millisecond)
	}
	if tool == 0 {
		daemon.Process.Kill()
		t.Fatal("the tool command did not start")
	}
	daemon.Process.Kill()
	daemon.Wait()
	for time.Now().Before(deadline) {
		if err := syscall.Kill(tool, 0); err == syscall.ESRCH {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	syscall.Kill(tool, syscall.SIGKILL)
	t.Fatalf("tool command %d outlived its caller", tool)
}
