package network

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/sbxhq/sbx/internal/httpegress"
	"github.com/sbxhq/sbx/internal/netfloor"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// HTTP egress redirect: the outbound TCP 80 and 443 of a sandbox whose
// policy has an http section goes to the daemon's egress proxy
// (internal/httpegress) on the gateway, port Config.HTTPProxyPort.
//
//   - set "http_sb": the addresses of those sandboxes.
//   - chain prerouting (nat): their TCP 80/443 from the bridge is
//     redirected to the proxy port; the kernel keeps the original
//     destination for SO_ORIGINAL_DST.
//   - input: the proxy port accepts redirected connections only (ct status
//     dnat), so a sandbox cannot talk to the proxy unless redirected.
//
// Redirected connections are local to the host, so they skip the forward
// chain and its per-sandbox policy: the proxy checks the policy itself
// (EgressAllows) before it opens anything for the sandbox.

const httpSet = "http_sb"

// httpRedirectBase adds the redirect's set, chain and input rule to an
// ensureBase script; nothing when the proxy is off.
func (f *firewall) httpRedirectBase(line func(string, ...any)) {
	if f.httpPort == 0 {
		return
	}
	t, br := "inet "+f.table, fmt.Sprintf("%q", f.bridge)
	line("add set %s %s { type ipv4_addr ; }", t, httpSet)
	line("add chain %s prerouting { type nat hook prerouting priority dstnat ; policy accept ; }", t)
	line("flush chain %s prerouting", t)
	line("add rule %s prerouting iifname %s ip saddr @%s tcp dport { 80, 443 } redirect to :%d", t, br, httpSet, f.httpPort)
	line("add rule %s input iifname %s ip daddr %s tcp dport %d ct status dnat accept", t, br, f.gw, f.httpPort)
}

// httpRedirectSandbox puts ip in or out of the redirected set.
func (f *firewall) httpRedirectSandbox(line func(string, ...any), ip netip.Addr, on bool) {
	if f.httpPort == 0 {
		return
	}
	t := "inet " + f.table
	// "add" first makes the delete valid whether or not ip is there.
	line("add element %s %s { %s }", t, httpSet, ip)
	if !on {
		line("delete element %s %s { %s }", t, httpSet, ip)
	}
}

// HTTPSandbox is the sandbox at address src, for the egress proxy.
func (m *Manager) HTTPSandbox(src netip.Addr) (httpegress.Sandbox, bool) {
	mem := m.memberAt(src)
	if mem == nil {
		return httpegress.Sandbox{}, false
	}
	mem.mu.Lock()
	defer mem.mu.Unlock()
	var h *wire.HTTPEgress
	if mem.egress != nil {
		h = mem.egress.HTTP
	}
	return httpegress.Sandbox{ID: mem.id, Team: mem.team, HTTP: h}, true
}

// EgressAllows applies the sandbox's policy to a connection the proxy
// makes for it, as its firewall chain would (plus the name, when known:
// the server name or Host of the request, checked against the domains).
func (m *Manager) EgressAllows(src, dst netip.Addr, host string) bool {
	return m.proxyAllows(src, dst, host, false)
}

// DialAllows applies the sandbox's policy to an address the proxy
// resolved itself for the name host (an inject rule's host, a rewrite's):
// there the name is the daemon's word, so a name an allow-list lists
// allows its addresses even before the sandbox's DNS learned them.
func (m *Manager) DialAllows(src, dst netip.Addr, host string) bool {
	return m.proxyAllows(src, dst, host, true)
}

func (m *Manager) proxyAllows(src, dst netip.Addr, host string, resolvedHere bool) bool {
	// The proxy dials from the host, where the firewall's isolation does
	// not hold: other sandboxes, the host's own services and the
	// operator's floor stay out of reach as they are for a sandbox's own
	// packets.
	if m.subnet.Contains(dst) || dst.IsLoopback() || dst.IsUnspecified() || dst.IsMulticast() || netfloor.IsHostAddr(dst) || m.cfg.Floor.Check(dst) != nil {
		return false
	}
	mem := m.memberAt(src)
	if mem == nil {
		return false
	}
	mem.mu.Lock()
	defer mem.mu.Unlock()
	p := mem.policy
	listed := m.listedAddr(mem, dst)
	named := host != "" && p.matches(host)
	switch p.mode {
	case AllowAll:
		return true
	case AllowList:
		if resolvedHere {
			return listed || named
		}
		// The sandbox chose the address: an allowed address under a name
		// the list does not allow is refused too (the name says where the
		// request really goes), and a listed name never lets it reach an
		// address the list does not hold (domain fronting).
		return listed && (host == "" || named || inCIDRs(mem.egress, dst))
	case DenyList:
		return !listed && !named
	}
	return false
}

// listedAddr reports whether dst is in the policy's CIDRs or learned set.
func (m *Manager) listedAddr(mem *member, dst netip.Addr) bool {
	if inCIDRs(mem.egress, dst) {
		return true
	}
	now := time.Now()
	for _, as := range mem.learned {
		for _, a := range as {
			if a.ip == dst && a.expires.After(now) {
				return true
			}
		}
	}
	return false
}

func inCIDRs(e *store.Egress, dst netip.Addr) bool {
	if e == nil {
		return false
	}
	for _, c := range e.CIDRs {
		if pfx, err := netip.ParsePrefix(c); err == nil && pfx.Contains(dst) {
			return true
		}
	}
	return false
}

// DNSUpstreams are the resolvers the sandboxes' DNS server asks.
func (m *Manager) DNSUpstreams() []string { return m.cfg.DNSUpstreams }
