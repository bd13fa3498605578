package agent

import (
	"context"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Shutdown sends SIGTERM, and SIGKILL only to what is left after the grace.
func TestShutdownTermThenKill(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	ignores := a.stream(context.Background(), wire.ExecRequest{Shell: "trap '' TERM; echo ready; sleep 1000"})
	ignores.must("start")
	ignores.must("stdout")
	obeys := a.stream(context.Background(), wire.ExecRequest{Shell: "echo ready; exec sleep 1000"})
	obeys.must("start")
	obeys.must("stdout")

	if err := a.client.Shutdown(t.Context(), 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if exit, _, _ := obeys.untilExit(); exit.Signal != "SIGTERM" || exit.ExitCode != 143 {
		t.Fatalf("TERM-obeying process: %+v", exit)
	}
	if exit, _, _ := ignores.untilExit(); exit.Signal != "SIGKILL" || exit.ExitCode != 137 {
		t.Fatalf("TERM-ignoring process: %+v", exit)
	}
	if err := a.stop(); err != nil { // Run returned after the shutdown
		t.Fatal(err)
	}
	if err := a.client.Health(t.Context()); !errdefs.Is(err, errdefs.KindUnavailable) {
		t.Fatalf("health after shutdown: %v", err)
	}
}

func TestShutdownBadGrace(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	a.callErr("POST", "/shutdown?graceSeconds=-1", nil, http.StatusBadRequest, "INVALID_GRACE")
	a.callErr("POST", "/shutdown?graceSeconds=soon", nil, http.StatusBadRequest, "INVALID_GRACE")
	a.call("POST", "/shutdown?graceSeconds=0", nil, http.StatusAccepted, nil)
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}
}

// The agent as its own process, like `sbx agent`: SIGTERM stops its
// processes and it exits 0.
func TestAgentProcessSIGTERM(t *testing.T) {
	t.Parallel()
	a, proc := startHelperAgent(t, nil)
	var h struct{ Pid int }
	a.call("GET", "/healthz", nil, http.StatusOK, &h)
	if h.Pid != proc.pid {
		t.Fatalf("healthz pid %d, want %d", h.Pid, proc.pid)
	}
	ev := a.stream(context.Background(), wire.ExecRequest{Shell: "echo ready; exec sleep 1000"})
	ev.must("start")
	ev.must("stdout")

	if err := syscall.Kill(proc.pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if exit, _, _ := ev.untilExit(); exit.Signal != "SIGTERM" {
		t.Fatalf("exec after agent SIGTERM: %+v", exit)
	}
	if ws := <-proc.done; !ws.Exited() || ws.ExitStatus() != 0 {
		t.Fatalf("agent process ended with %v", ws)
	}
	if _, err := os.Lstat(a.client.Socket()); !os.IsNotExist(err) {
		t.Fatalf("socket left behind: %v", err)
	}
}
