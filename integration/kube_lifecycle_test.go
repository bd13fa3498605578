package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// TestKubeLifecycle: in cluster mode a sandbox's Sandbox object owns its
// life (docs/kubernetes/lifecycle.md), so the API, kubectl and the host
// agree. An idle sandbox is suspended through its object and the next exec
// through the gateway starts it again; a TTL (set at create or by a PATCH,
// on a running or a suspended sandbox) deletes the object and leaves no
// pod, no sandbox on a host and no archive; a PATCHed setting is kept in
// the object, shown while suspended and carried to the other host.
func TestKubeLifecycle(t *testing.T) {
	gc := startGatewayCluster(t, "sbx-lc-a", "sbx-lc-b")
	c, srv, bucket, hosts, gw := gc.cluster, gc.srv, gc.bucket, gc.hosts, gc.gw
	ctx := context.Background()
	archived := func(id string) bool {
		_, err := os.Stat(filepath.Join(srv.Root, bucket, "cluster", "sandboxes", id, "sandbox.json"))
		return err == nil
	}
	onSomeHost := func(id string) bool {
		for _, h := range hosts {
			if _, err := h.client.GetSandbox(ctx, id); !sdk.IsNotFound(err) {
				return true
			}
		}
		return false
	}
	create := func(t *testing.T, req sdk.CreateSandboxRequest) *sdk.Sandbox {
		t.Helper()
		sb, err := gw.client.CreateSandbox(ctx, req)
		if err != nil || sb.State != sdk.StateStarted {
			t.Fatalf("create %s: %+v %v", req.Name, sb, err)
		}
		return sb
	}

	t.Run("idle stop and lazy start through the gateway", func(t *testing.T) {
		sb := create(t, sdk.CreateSandboxRequest{Name: "idle", AutoStopSeconds: new(3)})
		if res, err := gw.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: "echo kept > /workspace/kept"}); err != nil || res.ExitCode != 0 {
			t.Fatalf("exec: %+v %v", res, err)
		}
		// The host's idle stop is a suspend of the object: kubectl, the
		// API and the host all say so.
		waitFor(t, 90*time.Second, "the idle sandbox's Sandbox to be Suspended and its pod gone", func() bool {
			return c.kubeField("sandbox", sb.ID, "{.spec.operatingMode}") == "Suspended" && c.kubeField("pod", sb.ID, "{.metadata.name}") == ""
		})
		if got, err := gw.client.GetSandbox(ctx, "idle"); err != nil || got.State != sdk.StateStopped {
			t.Fatalf("get of the idle-stopped sandbox: %+v %v", got, err)
		}
		if onSomeHost(sb.ID) || !archived(sb.ID) {
			t.Fatalf("the idle-stopped sandbox is on a host (%v) or not archived (%v)", onSomeHost(sb.ID), archived(sb.ID))
		}
		// Lazy start: the exec sets it Running, waits until ready and runs.
		res, err := gw.client.Exec(ctx, "idle", sdk.ExecRequest{Shell: "cat /workspace/kept"})
		if err != nil || res.Stdout != "kept\n" {
			t.Fatalf("exec on the idle-stopped sandbox: %+v %v", res, err)
		}
		if err := gw.client.DeleteSandbox(ctx, sb.ID, true); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a PATCHed setting survives suspend and resume on the other host", func(t *testing.T) {
		sb := create(t, sdk.CreateSandboxRequest{Name: "patched"})
		first := c.kubeField("pod", sb.ID, "{.spec.nodeName}")
		got, err := gw.client.UpdateSandbox(ctx, "patched", sdk.UpdateSandboxRequest{
			AutoStopSeconds: new(1234), Env: map[string]*string{"PATCHED": new("yes")}, Labels: map[string]string{"stage": "two"}})
		if err != nil || got.AutoStopSeconds != 1234 || got.Labels["stage"] != "two" {
			t.Fatalf("patch: %+v %v", got, err)
		}
		check := func(when string) {
			t.Helper()
			got, err := gw.client.GetSandbox(ctx, "patched")
			if err != nil || got.AutoStopSeconds != 1234 || got.Labels["stage"] != "two" || got.Env["PATCHED"] != "yes" {
				t.Fatalf("get %s: %+v %v (want the PATCHed autoStopSeconds, label and env)", when, got, err)
			}
		}
		if _, err := gw.client.StopSandbox(ctx, "patched", sdk.StopOptions{}); err != nil {
			t.Fatal(err)
		}
		check("while suspended")
		c.kubectl("cordon", first)
		defer c.kubectl("uncordon", first)
		if _, err := gw.client.StartSandbox(ctx, "patched"); err != nil {
			t.Fatal(err)
		}
		if now := c.kubeField("pod", sb.ID, "{.spec.nodeName}"); now == first || hosts[now] == nil {
			t.Fatalf("resumed on %q, want the other host than %s", now, first)
		}
		check("after the resume on the other host")
		res, err := gw.client.Exec(ctx, "patched", sdk.ExecRequest{Shell: "echo $PATCHED"})
		if err != nil || res.Stdout != "yes\n" {
			t.Fatalf("env after the move: %+v %v", res, err)
		}
		if err := gw.client.DeleteSandbox(ctx, sb.ID, true); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("TTL delete leaves no pod and no sandbox", func(t *testing.T) {
		running := create(t, sdk.CreateSandboxRequest{Name: "ttl-running", TTLSeconds: 15})
		if at := c.kubeField("sandbox", running.ID, "{.spec.shutdownTime}"); at == "" {
			t.Fatal("the TTL is not the object's shutdownTime")
		}
		suspended := create(t, sdk.CreateSandboxRequest{Name: "ttl-suspended", TTLSeconds: 15})
		if _, err := gw.client.StopSandbox(ctx, suspended.ID, sdk.StopOptions{}); err != nil {
			t.Fatal(err)
		}
		patched := create(t, sdk.CreateSandboxRequest{Name: "ttl-patched"})
		if _, err := gw.client.UpdateSandbox(ctx, patched.ID, sdk.UpdateSandboxRequest{TTLSeconds: new(5)}); err != nil {
			t.Fatal(err)
		}
		for _, sb := range []*sdk.Sandbox{running, suspended, patched} {
			waitFor(t, 120*time.Second, sb.Name+"'s object, pod, sandbox and archive to be gone", func() bool {
				return c.kubeField("sandbox", sb.ID, "{.metadata.name}") == "" && c.kubeField("pod", sb.ID, "{.metadata.name}") == "" &&
					!onSomeHost(sb.ID) && !archived(sb.ID)
			})
			if _, err := gw.client.GetSandbox(ctx, sb.ID); !sdk.IsNotFound(err) {
				t.Fatalf("get of %s after its TTL: %v", sb.Name, err)
			}
		}
	})

	for name, h := range hosts {
		list, err := h.client.ListSandboxes(ctx, sdk.ListOptions{})
		if err != nil || len(list) != 0 {
			t.Errorf("host %s still has %d sandboxes: %v", name, len(list), err)
		}
	}
	if out := c.kubectl("get", "pods", "-n", "sbx", "-o", "name"); strings.TrimSpace(out) != "" {
		t.Errorf("pods left: %s", out)
	}
}
