package integration

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestKubeCompat: the Daytona and E2B SDK flows (their official npm SDKs,
// unchanged) through the cluster gateway over a real control plane and
// two hosts, each with a team's key of the gateway's keys file: create,
// exec, files, list, a stop or pause and the call that starts the sandbox
// again, delete; another team's key sees and touches none of it
// (testdata/daytona/gateway.mjs, testdata/e2b/gateway.mjs).
func TestKubeCompat(t *testing.T) {
	needDaytonaSDK(t)
	requireE2BSDK(t)
	gc := startGatewayCluster(t, "sbx-compat-a", "sbx-compat-b")
	c := gc.cluster
	keyA, entryA := gatewayKey(t, "team-a", "sandboxes:read", "sandboxes:write", "exec")
	keyB, entryB := gatewayKey(t, "team-b", "sandboxes:read", "sandboxes:write", "exec")
	keysFile := filepath.Join(c.dir, "keys.yaml")
	if err := os.WriteFile(keysFile, []byte("keys:\n"+entryA+entryB), 0o600); err != nil {
		t.Fatal(err)
	}
	// The python image on both hosts: E2B runs commands with bash, and the
	// Daytona flow names an image.
	var wg sync.WaitGroup
	for _, h := range gc.hosts {
		wg.Go(func() { importPython(t, h.daemon) })
	}
	wg.Wait()
	gc.gw.stop()
	gw := startGateway(t, c, gc.gwKC, gc.keyFile, gc.key, freeAddr(t), "--keys-file", keysFile, "--e2b-template", "plain=python")
	base := "http://" + gw.addr

	t.Run("Daytona", func(t *testing.T) {
		out := runNode(t, daytonaDir, "gateway.mjs", "DAYTONA_API_URL="+base+"/daytona/api", "DAYTONA_API_KEY="+keyA, "DAYTONA_OTHER_KEY="+keyB)
		for _, step := range []string{"create", "executeCommand", "files", "get and list", "another team cannot see or touch it",
			"stop, then a toolbox call starts it", "archive", "refusals name what they refuse", "delete"} {
			if !strings.Contains(out, "ok "+step+"\n") {
				t.Errorf("step %q did not pass:\n%s", step, out)
			}
		}
	})
	t.Run("E2B", func(t *testing.T) {
		out := runNode(t, e2bDir, "gateway.mjs", "E2B_API_URL="+base+"/e2b", "E2B_SANDBOX_URL="+base+"/e2b/sandbox",
			"E2B_API_KEY="+keyA, "E2B_OTHER_KEY="+keyB)
		if !strings.Contains(out, "ALL OK") {
			t.Errorf("gateway.mjs:\n%s", out)
		}
	})
	if out := c.kubectl("get", "sandboxes", "-n", "sbx", "-o", "name"); strings.TrimSpace(out) != "" {
		t.Errorf("sandboxes left after both flows deleted theirs: %s", out)
	}
}

// runNode runs a node program in dir with env added and returns its
// output; a failure or a hang fails the test with the output.
func runNode(t *testing.T, dir, program string, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", program)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	t.Logf("node %s (%s):\n%s", program, time.Since(start).Round(time.Millisecond), out.String())
	if err != nil {
		t.Fatalf("node %s: %v", program, err)
	}
	return out.String()
}
