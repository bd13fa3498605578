package integration

import (
	"context"
	"errors"
	"testing"

	"github.com/sbxhq/sbx/sdk"
)

// TestKubeGatewayPause: an explicit pause through the gateway is a suspend
// through the Sandbox object, as the idle pause is
// (docs/kubernetes/lifecycle.md): operatingMode Suspended, the pod gone,
// no host keeps the sandbox, the API says stopped; a second pause is 409
// SANDBOX_NOT_STARTED; resume runs it again with its files.
func TestKubeGatewayPause(t *testing.T) {
	gc := startGatewayCluster(t, "sbx-pause")
	c, gw, host := gc.cluster, gc.gw, gc.hosts["sbx-pause"]
	ctx := context.Background()
	sb, err := gw.client.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "p", CPU: 0.5, MemoryMiB: 256})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gw.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: "echo kept > /workspace/kept"}); err != nil {
		t.Fatal(err)
	}
	paused, err := gw.client.PauseSandbox(ctx, "p")
	if err != nil || paused.State != sdk.StateStopped {
		t.Fatalf("pause through the gateway: %+v %v", paused, err)
	}
	if mode := c.kubeField("sandbox", sb.ID, "{.spec.operatingMode}"); mode != "Suspended" {
		t.Fatalf("operatingMode after pause: %q, want Suspended", mode)
	}
	if pod := c.kubeField("pod", sb.ID, "{.metadata.name}"); pod != "" {
		t.Fatalf("the paused sandbox's pod is still there")
	}
	if _, err := host.client.GetSandbox(ctx, sb.ID); !sdk.IsNotFound(err) {
		t.Fatalf("the host still has the paused sandbox: %v", err)
	}
	if got, err := gw.client.GetSandbox(ctx, sb.ID); err != nil || got.State != sdk.StateStopped {
		t.Fatalf("get after pause: %+v %v", got, err)
	}
	var ae *sdk.APIError
	if _, err := gw.client.PauseSandbox(ctx, sb.ID); !errors.As(err, &ae) || ae.Code != sdk.CodeSandboxNotStarted {
		t.Fatalf("pause of a paused sandbox: %v, want 409 SANDBOX_NOT_STARTED", err)
	}
	resumed, err := gw.client.ResumeSandbox(ctx, sb.ID)
	if err != nil || resumed.State != sdk.StateStarted {
		t.Fatalf("resume through the gateway: %+v %v", resumed, err)
	}
	if mode := c.kubeField("sandbox", sb.ID, "{.spec.operatingMode}"); mode != "Running" {
		t.Fatalf("operatingMode after resume: %q", mode)
	}
	res, err := gw.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: "cat /workspace/kept"})
	if err != nil || res.Stdout != "kept\n" {
		t.Fatalf("file after pause and resume: %+v %v", res, err)
	}
	if err := gw.client.DeleteSandbox(ctx, sb.ID, true); err != nil {
		t.Fatal(err)
	}
}
