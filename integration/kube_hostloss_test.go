package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/blob/s3/s3test"
	"github.com/sbxhq/sbx/internal/kube/podspec"
	"github.com/sbxhq/sbx/sdk"
)

// TestKubeHostLoss: automatic recovery after a host is lost, with the data
// loss bounded by the checkpoint interval. A sandbox on host a writes v1,
// a checkpoint passes, it writes v2, and host a is lost. Nobody taints
// anything by hand: the gateway taints the NotReady node out-of-service,
// Kubernetes re-places the pod on host b, and b restores the newest
// checkpoint (v1, not v2, not a fresh sandbox) and says what was lost on
// the sandbox (API field recovery), the Sandbox object (condition
// SbxHostLost) and in an Event.
func TestKubeHostLoss(t *testing.T) {
	const interval = 15 * time.Second
	c := startCluster(t)
	srv := s3test.Start(t)
	bucket := srv.Bucket()
	c.kubectl("apply", "-f", filepath.Join(kubeDeploy, "gateway.yaml"))
	kc := c.serviceAccountKubeconfig("sbx-system", "sbx-host")
	ckpt := []string{"--kube-checkpoint-interval", interval.String()}
	a := startKubeHost(t, c, srv, bucket, "sbx-lost-a", kc, ckpt...)
	b := startKubeHost(t, c, srv, bucket, "sbx-lost-b", kc, ckpt...)
	for _, h := range []*kubeHost{a, b} {
		waitFor(t, 90*time.Second, h.node+" to be a Ready node", func() bool {
			return c.jsonpath("node", h.node, `{.status.conditions[?(@.type=="Ready")].status}`) == "True"
		})
	}
	raw := make([]byte, 16)
	rand.Read(raw)
	key := "sbx_" + hex.EncodeToString(raw)
	keyFile := filepath.Join(c.dir, "admin.token")
	if err := os.WriteFile(keyFile, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	startGateway(t, c, c.serviceAccountKubeconfig("sbx-system", "sbx-gateway"), keyFile, key, freeAddr(t),
		"--out-of-service-after", "5s")

	ctx := context.Background()
	id := podspec.IDForPod("sbx", "lost")
	type manifest struct {
		SavedAt    time.Time `json:"savedAt"`
		Checkpoint bool      `json:"checkpoint"`
	}
	saved := func() manifest { // the bucket's manifest of the sandbox
		var m manifest
		b, err := os.ReadFile(filepath.Join(srv.Root, bucket, "cluster", "sandboxes", id, "sandbox.json"))
		if err == nil {
			json.Unmarshal(b, &m)
		}
		return m
	}

	c.kubectl("cordon", b.node)
	c.kubectlIn(strings.ReplaceAll(sandboxPodYAML, "%NAME%", "lost"), "apply", "-f", "-")
	waitFor(t, 90*time.Second, "Sandbox lost to be Ready on "+a.node, func() bool {
		return c.sandboxReady("lost") && c.jsonpath("pod", "lost", "{.spec.nodeName}") == a.node
	})
	write := func(v string) time.Time {
		t.Helper()
		if res, err := a.client.Exec(ctx, id, sdk.ExecRequest{Shell: "echo " + v + " > /root/f"}); err != nil || res.ExitCode != 0 {
			t.Fatalf("exec on %s: %+v %v", a.node, res, err)
		}
		return time.Now()
	}
	v1 := write("v1")
	waitFor(t, 3*interval, "a checkpoint of v1", func() bool {
		m := saved()
		return m.Checkpoint && m.SavedAt.After(v1)
	})
	checkpoint := saved().SavedAt
	if log, err := os.ReadFile(filepath.Join(a.dataDir, "daemon.log")); err == nil {
		for _, l := range strings.Split(string(log), "\n") {
			if strings.Contains(l, "kube: checkpoint") {
				t.Logf("%s: %s", a.node, l) // its cost: bytes, the time frozen
			}
		}
	}
	v2 := write("v2")

	// Host a is lost: its daemon frozen, its instance ended and its veths
	// gone (see TestKubeFencing).
	a.cmd.Process.Signal(syscall.SIGSTOP)
	lostAt := time.Now()
	t.Cleanup(func() { a.cmd.Process.Signal(syscall.SIGCONT) })
	a.endInstances()
	if m := saved(); !m.SavedAt.Equal(checkpoint) {
		t.Fatalf("a checkpoint at %v came between v2 and the loss of the host: the test needs a longer interval", m.SavedAt)
	}
	c.kubectl("uncordon", b.node)

	waitFor(t, 240*time.Second, "Sandbox lost to be Ready on "+b.node+" without a hand-made taint", func() bool {
		return c.sandboxReady("lost") && c.jsonpath("pod", "lost", "{.spec.nodeName}") == b.node
	})
	if got := c.jsonpath("node", a.node, `{.spec.taints[?(@.key=="node.kubernetes.io/out-of-service")].effect}`); got != "NoExecute" {
		t.Errorf("%s's out-of-service taint: %q, want the gateway's NoExecute", a.node, got)
	}
	res, err := b.client.Exec(ctx, id, sdk.ExecRequest{Shell: "cat /root/f"})
	if err != nil || res.Stdout != "v1\n" {
		t.Fatalf("on %s: %+v %v; want v1, the checkpointed file (v2 came after it; nothing would be a fresh sandbox)", b.node, res, err)
	}

	sb, err := b.client.GetSandbox(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	rec := sb.Recovery
	if rec == nil || rec.From != "checkpoint" || rec.SavedAt == nil || !rec.SavedAt.Equal(checkpoint) {
		t.Fatalf("recovery on %s: %+v, want from the checkpoint saved at %v", b.node, rec, checkpoint)
	}
	// What was lost: v2, written after the save; the window from the save
	// to the loss of the host is at most one checkpoint interval.
	if !v2.After(*rec.SavedAt) {
		t.Errorf("v2 written at %v, before the save at %v", v2, rec.SavedAt)
	}
	if window := lostAt.Sub(*rec.SavedAt); window > interval {
		t.Errorf("lost %v of changes (saved %v, host lost %v): more than the checkpoint interval %v", window, rec.SavedAt, lostAt, interval)
	}
	t.Logf("loss window %v (checkpoint interval %v): %s", lostAt.Sub(*rec.SavedAt), interval, rec.Message)

	// The host puts the condition back when agent-sandbox's controller
	// patches it away from a stale read (internal/kube/node/recovery.go).
	waitFor(t, 60*time.Second, "condition SbxHostLost with reason RestoredFromCheckpoint on Sandbox lost", func() bool {
		return c.jsonpath("sandbox", "lost", `{.status.conditions[?(@.type=="SbxHostLost")].reason}`) == "RestoredFromCheckpoint"
	})
	events := c.kubectl("get", "events", "-n", "sbx", "--field-selector", "involvedObject.name=lost,reason=RestoredFromCheckpoint", "-o", "jsonpath={.items[*].message}")
	if !strings.Contains(events, "restored from the checkpoint") {
		t.Errorf("no RestoredFromCheckpoint Event on Sandbox lost: %q", events)
	}

	c.kubectl("delete", "sandbox", "lost", "-n", "sbx")
	waitFor(t, 60*time.Second, "the sandbox to leave "+b.node, func() bool {
		_, err := b.client.GetSandbox(ctx, id)
		return sdk.IsNotFound(err)
	})
}

// TestKubeLeaseLossFreezes: a host that cannot renew its node Lease (here
// kube-apiserver is down) freezes its sandboxes on its own, so tainting
// it out-of-service is safe; once the lease renews they go on.
func TestKubeLeaseLossFreezes(t *testing.T) {
	c := startCluster(t)
	srv := s3test.Start(t)
	h := startKubeHost(t, c, srv, srv.Bucket(), "sbx-lease", c.serviceAccountKubeconfig("sbx-system", "sbx-host"))
	waitFor(t, 90*time.Second, h.node+" to be a Ready node", func() bool {
		return c.jsonpath("node", h.node, `{.status.conditions[?(@.type=="Ready")].status}`) == "True"
	})
	c.kubectlIn(strings.ReplaceAll(sandboxPodYAML, "%NAME%", "leased"), "apply", "-f", "-")
	waitFor(t, 90*time.Second, "Sandbox leased to be Ready", func() bool { return c.sandboxReady("leased") })
	id := podspec.IDForPod("sbx", "leased")
	status := func() string {
		out, err := exec.Command("runc", "--root", filepath.Join(h.dataDir, "runc"), "state", id).Output()
		var st struct{ Status string }
		if err != nil || json.Unmarshal(out, &st) != nil {
			return ""
		}
		return st.Status
	}
	if s := status(); s != "running" {
		t.Fatalf("runc state of %s: %q, want running", id, s)
	}
	c.withAPIServerDown(func() {
		waitFor(t, 120*time.Second, "the cut-off host to freeze its sandbox", func() bool { return status() == "paused" })
	})
	waitFor(t, 120*time.Second, "the sandbox to run again once the lease renews", func() bool { return status() == "running" })
	res, err := h.client.Exec(context.Background(), id, sdk.ExecRequest{Shell: "echo ok"})
	if err != nil || res.Stdout != "ok\n" {
		t.Fatalf("exec after the thaw: %+v %v", res, err)
	}
}
