package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/sdk"
)

// agentCopies returns the sizes of the agent binaries the daemon keeps in
// its data dir (sandbox.InstallAgent).
func (d *daemon) agentCopies(t *testing.T) []int64 {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(d.dataDir, "agent"))
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int64
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && strings.HasPrefix(e.Name(), "sbx-") {
			sizes = append(sizes, fi.Size())
		}
	}
	return sizes
}

// TestAgentBinary: sandboxes run sbx-agent, found next to sbx, and the
// variables meant for the agent's Go runtime alone (GOMAXPROCS=1) do not
// reach the sandbox's processes. Without sbx-agent next to it the daemon
// runs itself as the agent, with a warning.
func TestAgentBinary(t *testing.T) {
	d := startDaemon(t, "--network", "none")
	agentBin := filepath.Join(filepath.Dir(sbxBin), "sbx-agent")
	if sizes := d.agentCopies(t); len(sizes) != 1 || sizes[0] != fileSize(agentBin) {
		t.Errorf("agent copies of sizes %v, want one of sbx-agent's %d bytes", sizes, fileSize(agentBin))
	}
	d.create(sdk.CreateSandboxRequest{Name: "a"})
	if env := d.exec("a", "env"); strings.Contains(env, "GOMAXPROCS") || strings.Contains(env, "SBX_AGENT_ONLY_ENV") {
		t.Errorf("the agent's own variables reach the sandbox's processes:\n%s", env)
	}
	// A sandbox's own GOMAXPROCS is its processes', not taken away.
	d.create(sdk.CreateSandboxRequest{Name: "b", Env: map[string]string{"GOMAXPROCS": "3"}})
	if got := d.exec("b", "echo $GOMAXPROCS"); got != "3" {
		t.Errorf("a sandbox's own GOMAXPROCS: %q, want 3", got)
	}

	// sbx alone in a directory: the fallback.
	alone := filepath.Join(t.TempDir(), "sbx")
	if err := os.Link(sbxBin, alone); err != nil {
		t.Fatalf("link sbx: %v", err)
	}
	f := startDaemonWith(t, alone, "--network", "none")
	if !strings.Contains(f.daemonLog(), "no sbx-agent next to sbx") {
		t.Errorf("no warning about the missing sbx-agent:\n%s", f.daemonLog())
	}
	if sizes := f.agentCopies(t); len(sizes) != 1 || sizes[0] != fileSize(sbxBin) {
		t.Errorf("agent copies of sizes %v, want one of sbx's %d bytes", sizes, fileSize(sbxBin))
	}
	f.create(sdk.CreateSandboxRequest{Name: "c"})
	if got := f.exec("c", "echo ok"); got != "ok" {
		t.Errorf("exec with sbx as the agent: %q", got)
	}
}
