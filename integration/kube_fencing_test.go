package integration

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/blob/s3/s3test"
	"github.com/sbxhq/sbx/internal/kube/podspec"
	"github.com/sbxhq/sbx/sdk"
)

// TestKubeFencing: a host cut off from the cluster keeps its copy of a
// sandbox while Kubernetes places the pod's successor on another host.
// When it comes back and is told to delete the old pod, it must not write
// its stale copy over the newer one in the bucket (the successor claimed
// the sandbox: internal/sandbox/import.go, Claim).
func TestKubeFencing(t *testing.T) {
	c := startCluster(t)
	srv := s3test.Start(t)
	bucket := srv.Bucket()
	kc := c.serviceAccountKubeconfig("sbx-system", "sbx-host")
	a := startKubeHost(t, c, srv, bucket, "sbx-fence-a", kc)
	b := startKubeHost(t, c, srv, bucket, "sbx-fence-b", kc)
	for _, h := range []*kubeHost{a, b} {
		waitFor(t, 90*time.Second, h.node+" to be a Ready node", func() bool {
			return c.jsonpath("node", h.node, `{.status.conditions[?(@.type=="Ready")].status}`) == "True"
		})
	}
	ctx := context.Background()
	id := podspec.IDForPod("sbx", "fenced")
	stored := func() []byte { // the bucket's manifest and archive of the sandbox
		var out []byte
		for _, f := range []string{"sandbox.json", "upper.tar.zst"} {
			b, _ := os.ReadFile(filepath.Join(srv.Root, bucket, "cluster", "sandboxes", id, f))
			out = append(out, b...)
		}
		return out
	}

	c.kubectl("cordon", b.node)
	c.kubectlIn(strings.ReplaceAll(sandboxPodYAML, "%NAME%", "fenced"), "apply", "-f", "-")
	waitFor(t, 90*time.Second, "Sandbox fenced to be Ready on "+a.node, func() bool {
		return c.sandboxReady("fenced") && c.jsonpath("pod", "fenced", "{.spec.nodeName}") == a.node
	})
	if res, err := a.client.Exec(ctx, id, sdk.ExecRequest{Shell: "echo stale > /root/f"}); err != nil || res.ExitCode != 0 {
		t.Fatalf("exec on %s: %+v %v", a.node, res, err)
	}

	// Cut host a off: its daemon frozen (its files stay, as on a host
	// that lost its network), its instance ended and its veths taken out
	// of the kernel the two hosts share, so b can run the same sandbox id.
	a.cmd.Process.Signal(syscall.SIGSTOP)
	thawed := false
	thaw := func() {
		if !thawed {
			thawed = true
			a.cmd.Process.Signal(syscall.SIGCONT)
		}
	}
	t.Cleanup(thaw)
	a.endInstances()
	c.kubectl("uncordon", b.node)
	waitFor(t, 90*time.Second, a.node+" to be NotReady", func() bool {
		return c.jsonpath("node", a.node, `{.status.conditions[?(@.type=="Ready")].status}`) != "True"
	})
	c.kubectl("taint", "node", a.node, "node.kubernetes.io/out-of-service=nodeshutdown:NoExecute")
	waitFor(t, 150*time.Second, "Sandbox fenced to be Ready on "+b.node, func() bool {
		return c.sandboxReady("fenced") && c.jsonpath("pod", "fenced", "{.spec.nodeName}") == b.node
	})
	if res, err := b.client.Exec(ctx, id, sdk.ExecRequest{Shell: "echo newer > /root/f"}); err != nil || res.ExitCode != 0 {
		t.Fatalf("exec on %s: %+v %v", b.node, res, err)
	}
	c.kubectl("patch", "sandbox", "fenced", "-n", "sbx", "--type", "merge", "-p", `{"spec":{"operatingMode":"Suspended"}}`)
	waitFor(t, 60*time.Second, "the suspended sandbox to leave "+b.node, func() bool {
		_, err := b.client.GetSandbox(ctx, id)
		return sdk.IsNotFound(err)
	})
	newer := stored()
	if len(newer) == 0 {
		t.Fatal("no manifest or archive in the bucket after the suspend")
	}

	// Host a comes back and learns that its pod is gone.
	c.kubectl("cordon", a.node)
	thaw()
	waitFor(t, 120*time.Second, a.node+" to drop its copy", func() bool {
		_, err := a.client.GetSandbox(ctx, id)
		return sdk.IsNotFound(err)
	})
	if !bytes.Equal(stored(), newer) {
		t.Fatal("the cut-off host wrote its stale copy over the newer one in the bucket")
	}
	c.kubectl("patch", "sandbox", "fenced", "-n", "sbx", "--type", "merge", "-p", `{"spec":{"operatingMode":"Running"}}`)
	waitFor(t, 90*time.Second, "Sandbox fenced to be Ready again", func() bool { return c.sandboxReady("fenced") })
	res, err := b.client.Exec(ctx, id, sdk.ExecRequest{Shell: "cat /root/f"})
	if err != nil || res.Stdout != "newer\n" {
		t.Fatalf("after the resume: %+v %v (want the successor's file)", res, err)
	}
	c.kubectl("delete", "sandbox", "fenced", "-n", "sbx")
	waitFor(t, 60*time.Second, "the sandbox to leave "+b.node, func() bool {
		_, err := b.client.GetSandbox(ctx, id)
		return sdk.IsNotFound(err)
	})
}
