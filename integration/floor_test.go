package integration

import (
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// linkLocalServer makes a namespace, routes the link-local address addr
// from the host into it and serves "M" there on port 8080: a stand-in for
// the cloud metadata address (not 169.254.169.254 itself, so the host's
// own route to a real one is left alone).
func linkLocalServer(t *testing.T, addr netip.Addr) string {
	t.Helper()
	o := newOutside(t)
	mustRun(t, "ip", "-n", o.ns, "addr", "add", addr.String()+"/32", "dev", "lo")
	mustRun(t, "ip", "-n", o.ns, "route", "add", "default", "via", o.subnet.Addr().Next().String())
	mustRun(t, "ip", "route", "add", addr.String()+"/32", "via", o.a.String())
	t.Cleanup(func() { exec.Command("ip", "route", "del", addr.String()+"/32").Run() })
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "index.html"), []byte("M"), 0o644)
	srv := exec.Command("ip", "netns", "exec", o.ns, "busybox", "httpd", "-f", "-p", addr.String()+":8080", "-h", dir)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	url := "http://" + addr.String() + ":8080/"
	waitFor(t, 10*time.Second, "link-local server", func() bool {
		resp, err := http.Get(url) // from the host: the server is there
		if err != nil {
			return false
		}
		resp.Body.Close()
		return true
	})
	return url
}

// TestNetworkFloor: the operator's floor holds whatever a sandbox's policy
// says. A link-local address (the metadata stand-in) and a private one
// (the outside namespace) are refused with allow-all, with an allow-list
// naming them, and through the HTTP egress proxy; the private one opens
// only when the operator allows it (--egress-allow-private), the
// link-local one stays shut. An SSH port forward obeys the floor too.
func TestNetworkFloor(t *testing.T) {
	meta := netip.MustParseAddr("169.254.77.77")
	metaURL := linkLocalServer(t, meta)
	out := newOutside(t)
	urlA := "http://" + out.a.String() + ":8080/"

	sshAddr := freeAddr(t)
	d := startDaemon(t, "--ssh-listen", sshAddr)
	d.create(sdk.CreateSandboxRequest{Name: "floor"})
	d.mustBeRefused("floor", metaURL)
	d.mustBeRefused("floor", urlA)
	// An SSH port forward is dialled inside the sandbox: the floor holds.
	g := &sshGateway{d: d, addr: sshAddr, knownHost: filepath.Join(t.TempDir(), "known_hosts")}
	c, err := g.goClient(g.token(t, "floor", 600).Token, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, target := range []string{netip.AddrPortFrom(meta, 8080).String(), netip.AddrPortFrom(out.a, 8080).String()} {
		if conn, err := c.Dial("tcp", target); err == nil {
			conn.Close()
			t.Fatalf("an SSH port forward reached %s", target)
		}
	}
	d.setEgress("floor", sdk.EgressPolicy{Mode: sdk.EgressAllowList, CIDRs: []string{meta.String(), out.a.String()}})
	d.mustBeRefused("floor", metaURL)
	d.mustBeRefused("floor", urlA)
	d.setEgress("floor", sdk.EgressPolicy{Mode: sdk.EgressDenyList, CIDRs: []string{"192.0.2.0/24"}})
	d.mustBeRefused("floor", metaURL)
	// The egress proxy dials from the host, past the firewall: it checks
	// the floor itself.
	d.setEgress("floor", sdk.EgressPolicy{Mode: sdk.EgressAllowAll, HTTP: &sdk.HTTPEgress{Rules: []sdk.HTTPRule{{Host: "*", Action: sdk.HTTPActionAllow}}}})
	for _, u := range []string{metaURL, urlA} {
		if got, ok := d.fetch("floor", u); ok {
			t.Fatalf("through the egress proxy, %s answered %q", u, got)
		}
	}

	allowed := startDaemon(t, "--egress-allow-private", out.subnet.String())
	allowed.create(sdk.CreateSandboxRequest{Name: "lan"})
	allowed.mustFetch("lan", urlA, "A")
	allowed.mustBeRefused("lan", metaURL)
	allowed.setEgress("lan", sdk.EgressPolicy{Mode: sdk.EgressAllowList, CIDRs: []string{meta.String(), out.a.String()}})
	allowed.mustFetch("lan", urlA, "A")
	allowed.mustBeRefused("lan", metaURL)
	allowed.setEgress("lan", sdk.EgressPolicy{Mode: sdk.EgressAllowAll, HTTP: &sdk.HTTPEgress{Rules: []sdk.HTTPRule{{Host: "*", Action: sdk.HTTPActionAllow}}}})
	allowed.mustFetch("lan", urlA, "A")
	if got, ok := allowed.fetch("lan", metaURL); ok {
		t.Fatalf("through the egress proxy, %s answered %q", metaURL, got)
	}
}
