package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/blob/s3/s3test"
	"github.com/sbxhq/sbx/internal/kube/podspec"
	"github.com/sbxhq/sbx/sdk"
)

// TestKubeArchiveFollowsTheSandboxObject: a suspended Sandbox's archive
// lives exactly as long as its object. Deleting the object (it has no pod,
// so no host hears of it through virtual-kubelet) drops the archive through
// the sbx.dev/archive finalizer; and a Sandbox made again under the same
// namespace/name (same sbx id, another UID) starts fresh even when the old
// archive was left behind (its finalizer removed by hand).
func TestKubeArchiveFollowsTheSandboxObject(t *testing.T) {
	c := startCluster(t)
	srv := s3test.Start(t)
	bucket := srv.Bucket()
	h := startKubeHost(t, c, srv, bucket, "sbx-host-a", c.serviceAccountKubeconfig("sbx-system", "sbx-host"))
	waitFor(t, 60*time.Second, "the host to be a Ready node", func() bool {
		return c.jsonpath("node", h.node, `{.status.conditions[?(@.type=="Ready")].status}`) == "True"
	})
	ctx := context.Background()
	archived := func(id string) []string { // what the bucket holds of sandbox id
		var out []string
		for _, f := range []string{"sandbox.json", "upper.tar.zst"} {
			if _, err := os.Stat(filepath.Join(srv.Root, bucket, "cluster", "sandboxes", id, f)); err == nil {
				out = append(out, f)
			}
		}
		return out
	}
	create := func(name string) string {
		c.kubectlIn(strings.ReplaceAll(sandboxPodYAML, "%NAME%", name), "apply", "-f", "-")
		waitFor(t, 90*time.Second, "Sandbox "+name+" to be Ready", func() bool { return c.sandboxReady(name) })
		return podspec.IDForPod("sbx", name)
	}
	// suspend makes a Sandbox with a file in it and suspends it: its
	// sandbox is archived to the bucket and leaves the host.
	suspend := func(name string) string {
		id := create(name)
		if res, err := h.client.Exec(ctx, id, sdk.ExecRequest{Shell: "echo old > /root/before"}); err != nil || res.ExitCode != 0 {
			t.Fatalf("exec: %+v %v", res, err)
		}
		c.kubectl("patch", "sandbox", name, "-n", "sbx", "--type", "merge", "-p", `{"spec":{"operatingMode":"Suspended"}}`)
		waitFor(t, 60*time.Second, "suspended "+name+" to leave its host", func() bool {
			_, err := h.client.GetSandbox(ctx, id)
			return sdk.IsNotFound(err)
		})
		if got := archived(id); len(got) != 2 {
			t.Fatalf("suspended %s: the bucket holds %v, want its manifest and archive", name, got)
		}
		return id
	}
	objectGone := func(name string) bool {
		out, err := c.tryKubectl("get", "sandbox", name, "-n", "sbx")
		return err != nil && strings.Contains(out, "NotFound")
	}

	t.Run("delete drops the archive", func(t *testing.T) {
		id := suspend("gone")
		c.kubectl("delete", "sandbox", "gone", "-n", "sbx", "--wait=false")
		waitFor(t, 60*time.Second, "the deleted Sandbox's archive to leave the bucket", func() bool { return len(archived(id)) == 0 })
		waitFor(t, 30*time.Second, "the Sandbox object to be gone (finalizer removed)", func() bool { return objectGone("gone") })
	})

	t.Run("same name starts fresh", func(t *testing.T) {
		id := suspend("again")
		// The finalizer removed by hand (an operator forcing the delete):
		// the archive stays behind under the same sbx id.
		c.kubectl("patch", "sandbox", "again", "-n", "sbx", "--type", "merge", "-p", `{"metadata":{"finalizers":null}}`)
		c.kubectl("delete", "sandbox", "again", "-n", "sbx", "--wait=false")
		waitFor(t, 30*time.Second, "the Sandbox object to be gone", func() bool { return objectGone("again") })
		if again := create("again"); again != id {
			t.Fatalf("the same name has another id %s (was %s)", again, id)
		}
		res, err := h.client.Exec(ctx, id, sdk.ExecRequest{Shell: "ls /root"})
		if err != nil || strings.Contains(res.Stdout, "before") {
			t.Fatalf("the new Sandbox's /root: %+v %v (want it fresh, not the deleted one's files)", res, err)
		}
		if got := archived(id); len(got) != 0 {
			t.Errorf("the deleted Sandbox's archive is still in the bucket: %v", got)
		}
	})
}
