package integration

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/census"
	"github.com/sbxhq/sbx/sdk"
)

// TestKubeDrain: sbx gateway drain moves every sandbox off a host. Three
// running sandboxes with files on host A and one stopped there; drain A:
// each running one runs on B with its files, the stopped one is suspended
// (archived) and starts on B with its files when used, A is cordoned and
// holds no sandbox (its API lists none, and a census of its data dir,
// bridge and processes is back to what it was before the sandboxes).
func TestKubeDrain(t *testing.T) {
	const a, b = "sbx-drain-a", "sbx-drain-b"
	gc := startGatewayCluster(t, a, b)
	c, gw := gc.cluster, gc.gw
	ctx := context.Background()
	hostA := gc.hosts[a]
	scopeA := hostA.censusScope()
	scopeA.PID = hostA.cmd.Process.Pid
	// The hosts share one kernel and sandbox ids move between them: count
	// only what is A's by place (data dir, bridge, its children), not by id.
	scopeA.Sandbox = func(string) bool { return false }
	before := census.Take(scopeA).Host()

	// Everything on A: B is cordoned while they are made.
	c.kubectl("cordon", b)
	var names []string
	for i := range 4 {
		name := fmt.Sprintf("drain-%d", i)
		if _, err := gw.client.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: name, CPU: 0.25, MemoryMiB: 128}); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		if node := c.kubeField("pod", podOf(t, gw, name), "{.spec.nodeName}"); node != a {
			t.Fatalf("%s is on %q, want %s", name, node, a)
		}
		if res, err := gw.client.Exec(ctx, name, sdk.ExecRequest{Shell: "echo file-of-" + name + " > /workspace/f"}); err != nil || res.ExitCode != 0 {
			t.Fatalf("write a file in %s: %+v %v", name, res, err)
		}
		names = append(names, name)
	}
	// drain-3 is stopped on its host (its main process ended), pod still there.
	if _, err := hostA.client.StopSandbox(ctx, podOf(t, gw, "drain-3"), sdk.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	c.kubectl("uncordon", b)

	out, err := exec.Command(sbxBin, "gateway", "drain", a, "--kubeconfig", c.kubeconfig, "--timeout", "3m").CombinedOutput()
	t.Logf("sbx gateway drain %s:\n%s", a, out)
	if err != nil {
		t.Fatalf("drain: %v", err)
	}
	for _, name := range names[:3] {
		if !strings.Contains(string(out), "moved    "+podOf(t, gw, name)+" ("+name+", team default) to "+b) {
			t.Errorf("drain did not report %s moved to %s", name, b)
		}
	}
	if !strings.Contains(string(out), "suspended "+podOf(t, gw, "drain-3")) {
		t.Errorf("drain did not report drain-3 suspended")
	}
	if got := c.kubeField("node", a, "{.spec.unschedulable}"); got != "true" {
		t.Errorf("node %s after the drain: unschedulable %q", a, got)
	}

	for _, name := range names[:3] {
		sb, err := gw.client.GetSandbox(ctx, name)
		if err != nil || sb.State != sdk.StateStarted {
			t.Fatalf("%s after the drain: %+v %v", name, sb, err)
		}
		if node := c.kubeField("pod", sb.ID, "{.spec.nodeName}"); node != b {
			t.Errorf("%s is on %q after the drain, want %s", name, node, b)
		}
		if _, err := gc.hosts[b].client.GetSandbox(ctx, sb.ID); err != nil {
			t.Errorf("%s is not on host %s: %v", name, b, err)
		}
	}
	if sb, err := gw.client.GetSandbox(ctx, "drain-3"); err != nil || sb.State != sdk.StateStopped {
		t.Errorf("drain-3 (stopped on A) after the drain: %+v %v, want stopped", sb, err)
	}
	if mode := c.kubeField("sandbox", podOf(t, gw, "drain-3"), "{.spec.operatingMode}"); mode != "Suspended" {
		t.Errorf("drain-3's operatingMode after the drain: %q", mode)
	}
	if list, err := hostA.client.ListSandboxes(ctx, sdk.ListOptions{}); err != nil || len(list) != 0 {
		t.Fatalf("host %s after the drain: %d sandboxes %v", a, len(list), err)
	}
	if out := c.kubectl("get", "pods", "-n", "sbx", "--field-selector", "spec.nodeName="+a, "-o", "name"); strings.TrimSpace(out) != "" {
		t.Errorf("pods left on %s: %s", a, out)
	}
	for _, name := range names { // drain-3 starts (on B) on this exec
		res, err := gw.client.Exec(ctx, name, sdk.ExecRequest{Shell: "cat /workspace/f"})
		if err != nil || res.Stdout != "file-of-"+name+"\n" {
			t.Errorf("%s's file after the drain: %+v %v", name, res, err)
		}
	}
	waitFor(t, 30*time.Second, "host "+a+" to hold nothing of the sandboxes", func() bool {
		return len(census.Grown(census.Diff(before, census.Take(scopeA).Host()))) == 0
	})

	// Draining an empty host is a no-op that succeeds; a host that is not
	// an sbx node is refused.
	if out, err := exec.Command(sbxBin, "gateway", "drain", a, "--kubeconfig", c.kubeconfig).CombinedOutput(); err != nil || !strings.Contains(string(out), "drained "+a) {
		t.Errorf("second drain: %v\n%s", err, out)
	}
	if out, err := exec.Command(sbxBin, "gateway", "drain", "no-such-node", "--kubeconfig", c.kubeconfig).CombinedOutput(); err == nil || !strings.Contains(string(out), "no-such-node") {
		t.Errorf("drain of a missing node: %v\n%s", err, out)
	}
}

// podOf is the id (= pod and object name) of the sandbox called name.
func podOf(t *testing.T, gw *gatewayProc, name string) string {
	t.Helper()
	sb, err := gw.client.GetSandbox(context.Background(), name)
	if err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	return sb.ID
}
