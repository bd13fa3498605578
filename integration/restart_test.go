package integration

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// TestDaemonKill9KeepsSandboxes kills the daemon with SIGKILL: running
// instances keep running, and after a restart they are usable; an instance
// that died while the daemon was down is stopped with a reason.
func TestDaemonKill9KeepsSandboxes(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	alive := d.create(sdk.CreateSandboxRequest{Name: "alive"})
	doomed := d.create(sdk.CreateSandboxRequest{Name: "doomed"})
	if _, err := d.client.Exec(ctx, "alive", sdk.ExecRequest{Shell: "echo before > /workspace/f; sleep 1000 >/dev/null 2>&1 &"}); err != nil {
		t.Fatal(err)
	}

	d.kill9()
	runcRoot := filepath.Join(d.dataDir, "runc")
	if out, err := exec.Command("runc", "--root", runcRoot, "state", alive.ID).CombinedOutput(); err != nil || !strings.Contains(string(out), `"running"`) {
		t.Fatalf("instance not running after daemon kill: %s %v", out, err)
	}
	// Kill one instance while no daemon watches.
	if out, err := exec.Command("runc", "--root", runcRoot, "kill", "--all", doomed.ID, "KILL").CombinedOutput(); err != nil {
		t.Fatalf("runc kill: %s %v", out, err)
	}
	waitFor(t, 10*time.Second, "doomed instance to stop", func() bool {
		out, _ := exec.Command("runc", "--root", runcRoot, "state", doomed.ID).Output()
		return !strings.Contains(string(out), `"running"`)
	})

	d.start()
	got, err := d.client.GetSandbox(ctx, "alive")
	if err != nil || got.State != sdk.StateStarted {
		t.Fatalf("alive after restart = %+v, %v", got, err)
	}
	res, err := d.client.Exec(ctx, "alive", sdk.ExecRequest{Shell: "cat /workspace/f; ps -o args | grep -c '^sleep 1000'"})
	if err != nil || res.Stdout != "before\n1\n" {
		t.Errorf("exec after restart = %+v, %v", res, err)
	}
	gone, err := d.client.GetSandbox(ctx, "doomed")
	if err != nil || gone.State != sdk.StateStopped || gone.Reason == "" {
		t.Errorf("doomed after restart = %+v, %v", gone, err)
	}
	// The stopped one starts again with its files.
	if _, err := d.client.StartSandbox(ctx, "doomed"); err != nil {
		t.Fatal(err)
	}
}

// TestInstanceCrashIsNoticed kills the agent (PID 1) under a running daemon.
func TestInstanceCrashIsNoticed(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{})
	out, err := exec.Command("runc", "--root", filepath.Join(d.dataDir, "runc"), "kill", "--all", sb.ID, "KILL").CombinedOutput()
	if err != nil {
		t.Fatalf("runc kill: %s %v", out, err)
	}
	waitFor(t, 10*time.Second, "state stopped", func() bool {
		got, err := d.client.GetSandbox(ctx, sb.ID)
		return err == nil && got.State == sdk.StateStopped && got.Reason == "crash"
	})
	if _, err := d.client.StartSandbox(ctx, sb.ID); err != nil {
		t.Fatalf("restart after crash: %v", err)
	}
}
