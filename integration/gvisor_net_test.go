package integration

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// TestGVisorNetwork: a gvisor sandbox on the bridge follows its egress
// policy and serves a preview; a pause tears its network down and a resume
// or a fork restores the listening server into a namespace of its own, with
// the policy kept.
func TestGVisorNetwork(t *testing.T) {
	out := newOutside(t)
	names := newTestDNS(t)
	names.set("allowed.test", out.a)
	names.set("other.test", out.b)
	d := gvisorDaemon(t, "--egress-allow-private", out.subnet.String(), "--dns-upstream", names.addr)
	ctx := context.Background()
	urlA := "http://" + out.a.String() + ":8080/"

	sb := d.create(sdk.CreateSandboxRequest{Name: "gn", Class: "gvisor",
		Egress: &sdk.EgressPolicy{Mode: sdk.EgressAllowList, Domains: []string{"allowed.test"}}})
	if sb.Network != sdk.NetworkBridge || sb.Egress == nil || sb.Egress.Mode != sdk.EgressAllowList {
		t.Fatalf("created: network %q egress %+v", sb.Network, sb.Egress)
	}
	d.mustFetch("gn", "http://allowed.test:8080/", "A")
	d.mustBeRefused("gn", "http://"+out.b.String()+":8080/")
	// A live change: b by name now, a no more.
	d.setEgress("gn", sdk.EgressPolicy{Mode: sdk.EgressAllowList, Domains: []string{"other.test"}})
	d.mustFetch("gn", "http://other.test:8080/", "B")
	d.mustBeRefused("gn", urlA)
	checkEgress := func(name string) {
		t.Helper()
		d.mustFetch(name, "http://other.test:8080/", "B")
		d.mustBeRefused(name, urlA)
	}

	// A server on all addresses, reached from the host through a preview.
	d.exec("gn", "mkdir -p /www && echo gvisor > /www/index.html")
	if _, err := d.client.StartProcess(ctx, "gn", sdk.StartProcessRequest{ID: "httpd", Cmd: []string{"busybox", "httpd", "-f", "-p", "0.0.0.0:8080", "-h", "/www"}}); err != nil {
		t.Fatal(err)
	}
	previewGVisor(t, d, "gn")

	// An open connection: a runsc that drops connections at a checkpoint
	// pauses; Debian's runsc cannot save it, so the pause is refused and
	// the sandbox runs on. Once the client has gone, the pause goes
	// through (after waiting out the closed connections: see
	// sandbox.waitConnsClosed). Then nothing of the sandbox's network is
	// left on the host.
	before, err := d.client.GetNetwork(ctx, "gn")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp4", net.JoinHostPort(before.Address, "8080"), 10*time.Second)
	if err != nil {
		t.Fatalf("connect to gn at %s: %v", before.Address, err)
	}
	_, err = d.client.PauseSandbox(ctx, "gn")
	if !runscDropsConns() {
		if apiCode(err) != "CHECKPOINT_REFUSED" {
			t.Fatalf("pause with a client connected: %v, want CHECKPOINT_REFUSED", err)
		}
		previewGVisor(t, d, "gn") // it runs on
		conn.Close()
		_, err = d.client.PauseSandbox(ctx, "gn")
	}
	if err != nil {
		t.Fatalf("pause: %v", err)
	}
	conn.Close()
	bridge := d.flag("--bridge")
	if out, _ := exec.Command("ip", "-o", "link", "show", "master", bridge).Output(); len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("veth on %s while paused:\n%s", bridge, out)
	}
	if _, err := os.Stat(filepath.Join(d.dataDir, "network", sb.ID)); !os.IsNotExist(err) {
		t.Errorf("network directory (netns) of the paused sandbox: %v", err)
	}
	if m := mountsUnder(filepath.Join(d.dataDir, "network")); len(m) > 0 {
		t.Errorf("netns mounts while paused: %v", m)
	}
	if _, err := d.client.ResumeSandbox(ctx, "gn"); err != nil {
		t.Fatal(err)
	}
	previewGVisor(t, d, "gn")
	checkEgress("gn")
	parent, err := d.client.GetNetwork(ctx, "gn")
	if err != nil || parent.Address == "" {
		t.Fatalf("network of gn: %+v, %v", parent, err)
	}

	// Forks: an address each, the server restored in each, the policy kept.
	res, err := d.client.ForkSandbox(ctx, "gn", sdk.ForkRequest{Name: "kid", Count: 2})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{parent.Address: "gn"}
	for _, f := range res.Forks {
		d.created[f.ID] = true
		info, err := d.client.GetNetwork(ctx, f.Name)
		if err != nil || info.Address == "" || seen[info.Address] != "" {
			t.Fatalf("network of %s: %+v, %v (addresses so far: %v)", f.Name, info, err, seen)
		}
		seen[info.Address] = f.Name
		previewGVisor(t, d, f.Name)
		checkEgress(f.Name)
	}
	// Sandboxes cannot reach one another, even with egress open.
	d.setEgress("kid-1", sdk.EgressPolicy{Mode: sdk.EgressAllowAll})
	d.mustFetch("kid-1", urlA, "A")
	if got, ok := d.fetch("kid-1", "http://"+parent.Address+":8080/"); ok {
		t.Fatalf("kid-1 reached its parent at %s: %q", parent.Address, got)
	}
	previewGVisor(t, d, "gn") // the parent still serves

	if err := d.client.DeleteSandboxCascade(ctx, "gn", true); err != nil {
		t.Fatal(err)
	}
	d.assertNoLeaks()
}

// previewGVisor exposes port 8080 of sb (again: exposing is idempotent) and
// waits until the server started in gn answers through the preview proxy.
func previewGVisor(t *testing.T, d *daemon, sb string) {
	t.Helper()
	p, err := d.client.ExposePort(context.Background(), sb, sdk.ExposePortRequest{Port: 8080})
	if err != nil {
		t.Fatal(err)
	}
	tok := map[string]string{"X-Sbx-Preview-Token": p.Token}
	waitFor(t, 30*time.Second, "the server in "+sb+" through its preview", func() bool {
		status, body, _ := d.get(p.PathURL, "", tok)
		return status == 200 && body == "gvisor\n"
	})
}

// runscDropsConns reports whether the runsc the daemon runs (SBX_RUNSC,
// else sbx's own, else runsc on PATH) drops open connections at a
// checkpoint.
func runscDropsConns() bool {
	out, _ := exec.Command(daemonRunsc(nil), "flags").CombinedOutput()
	return strings.Contains(string(out), "-net-disconnect-ok")
}
