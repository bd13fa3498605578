package network

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/miekg/dns"
	"github.com/vishvananda/netlink"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/netfloor"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/store"
)

type testNet struct {
	t        *testing.T
	m        *Manager
	cfg      Config
	st       *store.SQLite
	upstream *fakeUpstream
	out      *outside
}

func newTestNet(t *testing.T, ids ...string) *testNet {
	t.Helper()
	needRoot(t)
	tn := &testNet{t: t, st: testStore(t, ids...), upstream: newFakeUpstream(t), out: newOutside(t)}
	tn.cfg = Config{
		DataDir: t.TempDir(), Bridge: randName("sbxu"), Subnet: freeSubnet(t, 251).String(),
		DNSUpstreams: []string{tn.upstream.addr}, Store: tn.st,
		Floor: netfloor.New(netfloor.Config{Allow: []netip.Prefix{tn.out.subnet}}),
	}
	tn.start()
	t.Cleanup(func() {
		for _, id := range ids {
			tn.m.Teardown(context.Background(), id)
		}
		tn.m.Close()
		if err := tn.m.Destroy(context.Background()); err != nil {
			t.Errorf("destroy: %v", err)
		}
	})
	return tn
}

// start starts (or, after close, restarts) the Manager, as a daemon would.
func (tn *testNet) start() {
	m, err := New(context.Background(), tn.cfg)
	if err != nil {
		tn.t.Fatal(err)
	}
	tn.m = m
}

// setup gives sandbox id a network with policy e and returns its namespace.
func (tn *testNet) setup(id string, e *store.Egress) (*store.Sandbox, string) {
	tn.t.Helper()
	sb := &store.Sandbox{ID: id, Spec: store.Spec{Network: ModeBridge, Egress: e}}
	var inst runtime.Instance
	if err := tn.m.Setup(context.Background(), sb, &inst); err != nil {
		tn.t.Fatal(err)
	}
	if inst.NetNSPath == "" || inst.ResolvConf == "" {
		tn.t.Fatalf("Setup left the instance without network: %+v", inst)
	}
	b, _ := os.ReadFile(inst.ResolvConf)
	if !strings.Contains(string(b), "nameserver "+tn.m.Gateway().String()) {
		tn.t.Fatalf("resolv.conf = %q", b)
	}
	return sb, inst.NetNSPath
}

func (tn *testNet) setEgress(sb *store.Sandbox, e *store.Egress) {
	tn.t.Helper()
	sb.Spec.Egress = e
	if err := tn.m.SetEgress(context.Background(), sb); err != nil {
		tn.t.Fatal(err)
	}
}

// mustReach and mustBeRefused check a connection from ns to addr:8080.
func (tn *testNet) mustReach(ns string, addr netip.Addr) {
	tn.t.Helper()
	got, err := connectFrom(ns, netip.AddrPortFrom(addr, 8080))
	if err != nil || got != addr.String() {
		tn.t.Fatalf("connect to %s: %q, %v; want it reached", addr, got, err)
	}
}

func (tn *testNet) mustBeRefused(ns string, addr netip.Addr) {
	tn.t.Helper()
	_, err := connectFrom(ns, netip.AddrPortFrom(addr, 8080))
	// A refusal, not a timeout: blocked connections fail fast.
	if !errors.Is(err, syscall.ECONNREFUSED) {
		tn.t.Fatalf("connect to %s: %v; want connection refused", addr, err)
	}
}

// TestFloor: the operator's floor holds under an allow-all policy; the
// daemon's start re-reads it (the sandbox's own chain is left alone).
func TestFloor(t *testing.T) {
	tn := newTestNet(t, "sbx-a")
	_, ns := tn.setup("sbx-a", nil)
	tn.mustReach(ns, tn.out.a) // the outside's private subnet is allowed
	restart := func(f *netfloor.Floor) {
		tn.m.Close()
		tn.cfg.Floor = f
		tn.start()
	}
	restart(netfloor.New(netfloor.Config{}))
	tn.mustBeRefused(ns, tn.out.a)
	restart(netfloor.New(netfloor.Config{Allow: []netip.Prefix{netip.PrefixFrom(tn.out.a, 32)}}))
	tn.mustReach(ns, tn.out.a)
	tn.mustBeRefused(ns, tn.out.b)
}

func TestEgressPolicies(t *testing.T) {
	tn := newTestNet(t, "sbx-a")
	out := tn.out
	if _, err := New(context.Background(), tn.cfg); !errdefs.Is(err, errdefs.KindConflict) {
		t.Fatalf("a second manager on the same bridge: %v, want a Conflict", err)
	}
	sb, ns := tn.setup("sbx-a", nil)
	tn.mustReach(ns, out.a)
	tn.mustReach(ns, out.b)

	tn.setEgress(sb, &store.Egress{Mode: BlockAll})
	tn.mustBeRefused(ns, out.a)
	tn.mustBeRefused(ns, out.b)
	if rcode, _, err := lookupFrom(ns, tn.m.Gateway(), "a.test"); err != nil || rcode != dns.RcodeRefused {
		t.Fatalf("DNS under block-all: rcode %d, %v", rcode, err)
	}

	tn.setEgress(sb, &store.Egress{Mode: AllowList, CIDRs: []string{out.a.String() + "/32"}})
	tn.mustReach(ns, out.a)
	tn.mustBeRefused(ns, out.b)

	tn.setEgress(sb, &store.Egress{Mode: DenyList, CIDRs: []string{out.a.String() + "/32"}})
	tn.mustBeRefused(ns, out.a)
	tn.mustReach(ns, out.b)

	// The host's own services are out of reach, but for DNS on the gateway.
	if _, err := connectFrom(ns, netip.AddrPortFrom(tn.m.Gateway(), 22)); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("connect to the gateway's port 22: %v, want refused", err)
	}
}

func TestEgressByName(t *testing.T) {
	tn := newTestNet(t, "sbx-a")
	out, up, gw := tn.out, tn.upstream, tn.m.Gateway()
	up.set("allowed.test", out.a)
	up.set("other.test", out.b)
	sb, ns := tn.setup("sbx-a", &store.Egress{Mode: AllowList, Domains: []string{"allowed.test"}})

	// Nothing is reachable before the name is resolved through sbx.
	tn.mustBeRefused(ns, out.a)
	rcode, ips, err := lookupFrom(ns, gw, "allowed.test")
	if err != nil || rcode != dns.RcodeSuccess || len(ips) != 1 || ips[0] != out.a {
		t.Fatalf("lookup allowed.test: rcode %d %v %v", rcode, ips, err)
	}
	tn.mustReach(ns, out.a)
	tn.mustBeRefused(ns, out.b)
	if rcode, _, err := lookupFrom(ns, gw, "other.test"); err != nil || rcode != dns.RcodeRefused {
		t.Fatalf("lookup other.test: rcode %d, %v; want REFUSED", rcode, err)
	}
	tn.mustBeRefused(ns, out.b)

	// The name moves: the rule follows it once the sandbox resolves it again.
	up.set("allowed.test", out.b)
	if _, ips, _ := lookupFrom(ns, gw, "allowed.test"); len(ips) != 1 || ips[0] != out.b {
		t.Fatalf("lookup after the move: %v", ips)
	}
	tn.mustReach(ns, out.b)

	// DNS to any other server is refused while domain rules apply.
	if _, _, err := lookupFrom(ns, out.a, "allowed.test"); err == nil {
		t.Fatal("a DNS query to another server got through")
	}

	// A live change keeps what was learned for names still listed.
	tn.setEgress(sb, &store.Egress{Mode: AllowList, Domains: []string{"allowed.test", "x.test"}})
	tn.mustReach(ns, out.b)
	tn.setEgress(sb, &store.Egress{Mode: AllowList, Domains: []string{"x.test"}})
	tn.mustBeRefused(ns, out.b)

	// Deny-list: the denied name does not resolve and its address is blocked.
	tn.setEgress(sb, &store.Egress{Mode: DenyList, Domains: []string{"other.test"}})
	tn.mustReach(ns, out.b)
	if rcode, _, err := lookupFrom(ns, gw, "other.test"); err != nil || rcode != dns.RcodeRefused {
		t.Fatalf("lookup of a denied name: rcode %d, %v", rcode, err)
	}
	tn.mustBeRefused(ns, out.b)
	tn.mustReach(ns, out.a)
}

func TestIsolationAndCleanup(t *testing.T) {
	tn := newTestNet(t, "sbx-a", "sbx-b")
	ctx := context.Background()
	_, nsA := tn.setup("sbx-a", nil)
	_, nsB := tn.setup("sbx-b", nil)
	ipB, _ := tn.m.Address("sbx-b")
	ipA, _ := tn.m.Address("sbx-a")
	if ipA == ipB || !tn.m.Subnet().Contains(ipA) {
		t.Fatalf("addresses %s and %s", ipA, ipB)
	}
	serveIn(t, nsB, netip.AddrPortFrom(ipB, 8080))
	if got, err := connectFrom(nsB, netip.AddrPortFrom(ipB, 8080)); err != nil || got != ipB.String() {
		t.Fatalf("B cannot reach itself: %q %v", got, err)
	}
	if _, err := connectFrom(nsA, netip.AddrPortFrom(ipB, 8080)); err == nil {
		t.Fatal("sandbox A reached sandbox B")
	}

	// A daemon restart: the kernel state stays, Restore takes it back.
	tn.m.Close()
	tn.start()
	sbA := &store.Sandbox{ID: "sbx-a", Spec: store.Spec{Network: ModeBridge, Egress: &store.Egress{Mode: BlockAll}}}
	if err := tn.m.Restore(ctx, sbA); err != nil {
		t.Fatal(err)
	}
	tn.mustBeRefused(nsA, tn.out.a)
	if err := tn.m.Prune(ctx, map[string]bool{"sbx-a": true}); err != nil {
		t.Fatal(err)
	}
	// Prune removed B, which was not kept.
	if _, err := os.Stat(tn.m.netnsPath("sbx-b")); !os.IsNotExist(err) {
		t.Fatalf("B's namespace survived Prune: %v", err)
	}

	if err := tn.m.Teardown(ctx, "sbx-a"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"sbx-a", "sbx-b"} {
		if _, err := netlink.LinkByName(vethName(id)); err == nil {
			t.Errorf("veth of %s left", id)
		}
		if _, err := os.Stat(tn.m.dir(id)); !os.IsNotExist(err) {
			t.Errorf("network dir of %s left: %v", id, err)
		}
	}
	if leases, _ := tn.st.ListLeases(ctx); len(leases) != 0 {
		t.Errorf("leases left: %+v", leases)
	}
	out, _ := exec.Command("nft", "list", "table", "inet", tn.cfg.Bridge).CombinedOutput()
	if strings.Contains(string(out), "sb_") {
		t.Errorf("sandbox rules left:\n%s", out)
	}
	if err := tn.m.Teardown(ctx, "sbx-a"); err != nil {
		t.Fatalf("second teardown: %v", err)
	}
}
