package agent

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sbxhq/sbx/wire"
)

// The agent as PID 1 of its own pid namespace, as in an instance: it reaps
// orphans, and shutdown reaches processes outside the groups it started.
func TestAgentAsPID1(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	t.Parallel()
	a, proc := startHelperAgent(t, &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID})
	var h struct{ Pid int }
	a.call("GET", "/healthz", nil, http.StatusOK, &h)
	if h.Pid != 1 {
		t.Fatalf("healthz pid %d, want 1", h.Pid)
	}

	// The shell exits at once; its background child becomes an orphan of
	// PID 1 and, when it exits, must be reaped rather than left a zombie.
	if res := a.exec(wire.ExecRequest{Shell: "sleep 0.05 &"}); res.ExitCode != 0 {
		t.Fatalf("exec: %+v", res)
	}
	poll(t, "the agent to have no children left", func() bool { return len(children(t, proc.pid)) == 0 })

	// A process in its own session, outside every group the agent started.
	ev := a.stream(context.Background(), wire.ExecRequest{
		Shell: `setsid -w sh -c 'trap "echo got TERM; exit 0" TERM; echo ready; while :; do sleep 0.01; done'`,
	})
	ev.must("start")
	if out := ev.must("stdout"); string(out.Data) != "ready\n" {
		t.Fatalf("stdout %q", out.Data)
	}
	if err := a.client.Shutdown(t.Context(), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	_, stdout, _ := ev.untilExit()
	if !strings.Contains(stdout, "got TERM") {
		t.Fatalf("the session leader did not get SIGTERM; stdout %q", stdout)
	}
	if ws := <-proc.done; !ws.Exited() || ws.ExitStatus() != 0 {
		t.Fatalf("agent ended with %v", ws)
	}
}

// children lists the pids of pid's children, zombies included.
func children(t *testing.T, pid int) []string {
	t.Helper()
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var kids []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // thread gone
		}
		kids = append(kids, strings.Fields(string(data))...)
	}
	return kids
}
