package network

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/netfloor"
	"github.com/sbxhq/sbx/internal/store"
)

// TestProxyAllows: what the egress proxy may connect to for a sandbox
// mirrors its firewall chain, plus the names it sees.
func TestProxyAllows(t *testing.T) {
	src := netip.MustParseAddr("10.88.0.5")
	floor := netfloor.New(netfloor.Config{NoHost: true, Allow: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}})
	m := &Manager{cfg: Config{Floor: floor}, subnet: netip.MustParsePrefix("10.88.0.0/16"), byAddr: map[netip.Addr]*member{}}
	set := func(e *store.Egress, learned map[string][]netip.Addr) {
		mem := newMember("sb", src, e)
		for name, ips := range learned {
			for _, ip := range ips {
				mem.learned[name] = append(mem.learned[name], learnedAddr{ip: ip, expires: time.Now().Add(time.Minute)})
			}
		}
		m.byAddr[src] = mem
	}
	a, b, c := netip.MustParseAddr("203.0.113.1"), netip.MustParseAddr("203.0.113.2"), netip.MustParseAddr("198.51.100.7")
	check := func(what string, got, want bool) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %t, want %t", what, got, want)
		}
	}

	set(&store.Egress{Mode: AllowAll}, nil)
	check("allow-all, outside", m.EgressAllows(src, a, "x.test"), true)
	check("allow-all, another sandbox", m.EgressAllows(src, netip.MustParseAddr("10.88.0.9"), ""), false)
	check("allow-all, the gateway", m.DialAllows(src, netip.MustParseAddr("10.88.0.1"), "gw"), false)
	check("allow-all, loopback", m.DialAllows(src, netip.MustParseAddr("127.0.0.1"), "localhost"), false)
	check("unknown sandbox", m.EgressAllows(netip.MustParseAddr("10.88.0.77"), a, ""), false)
	meta, lan, allowed := netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("192.168.1.10"), netip.MustParseAddr("10.1.2.3")
	check("allow-all, metadata (the floor)", m.EgressAllows(src, meta, ""), false)
	check("allow-all, metadata by name (the floor)", m.DialAllows(src, meta, "metadata.test"), false)
	check("allow-all, private (the floor)", m.EgressAllows(src, lan, ""), false)
	check("allow-all, private the operator allows", m.EgressAllows(src, allowed, ""), true)

	set(&store.Egress{Mode: AllowList, CIDRs: []string{"198.51.100.0/24"}, Domains: []string{"api.test"}}, map[string][]netip.Addr{"api.test": {a}})
	check("allow-list, learned address and its name", m.EgressAllows(src, a, "api.test"), true)
	check("allow-list, learned address under another name", m.EgressAllows(src, a, "evil.test"), false)
	check("allow-list, listed name at an unlisted address (fronting)", m.EgressAllows(src, b, "api.test"), false)
	check("allow-list, CIDR under any name", m.EgressAllows(src, c, "whatever.test"), true)
	check("allow-list, the proxy's own lookup of a listed name", m.DialAllows(src, b, "api.test"), true)
	check("allow-list, the proxy's own lookup of another name", m.DialAllows(src, b, "other.test"), false)
	set(&store.Egress{Mode: AllowList, CIDRs: []string{"169.254.169.254/32", "192.168.1.0/24"}, Domains: []string{"meta.test"}}, map[string][]netip.Addr{"meta.test": {meta}})
	check("allow-list naming metadata (the floor)", m.EgressAllows(src, meta, ""), false)
	check("allow-list naming metadata by name (the floor)", m.DialAllows(src, meta, "meta.test"), false)
	check("allow-list naming a private range (the floor)", m.EgressAllows(src, lan, ""), false)

	set(&store.Egress{Mode: DenyList, Domains: []string{"bad.test"}}, map[string][]netip.Addr{"bad.test": {b}})
	check("deny-list, denied name", m.EgressAllows(src, a, "bad.test"), false)
	check("deny-list, denied address", m.EgressAllows(src, b, ""), false)
	check("deny-list, other", m.EgressAllows(src, a, "good.test"), true)

	set(&store.Egress{Mode: BlockAll}, nil)
	check("block-all", m.EgressAllows(src, a, ""), false)
}

// TestProxyNeverReachesTheHost: none of the host's own addresses, even
// with the whole floor lifted.
func TestProxyNeverReachesTheHost(t *testing.T) {
	src := netip.MustParseAddr("10.88.0.5")
	open := netfloor.New(netfloor.Config{Allow: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}})
	m := &Manager{cfg: Config{Floor: open}, subnet: netip.MustParsePrefix("10.88.0.0/16"), byAddr: map[netip.Addr]*member{src: newMember("sb", src, &store.Egress{Mode: AllowAll})}}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, ia := range addrs {
		pfx, err := netip.ParsePrefix(ia.String())
		if err != nil || !pfx.Addr().Is4() {
			continue
		}
		if m.EgressAllows(src, pfx.Addr(), "") || m.DialAllows(src, pfx.Addr(), "host") {
			t.Errorf("the proxy may connect to the host's address %s", pfx.Addr())
		}
	}
}
