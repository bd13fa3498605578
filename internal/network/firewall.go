package network

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/netfloor"
	"github.com/sbxhq/sbx/wire"
)

// firewall keeps the daemon's nftables table "inet <bridge>":
//
//   - forward: sandbox-to-sandbox traffic is refused; traffic from outside
//     may only answer connections a sandbox opened; traffic from a sandbox
//     jumps, by its source address (map "egress"), to that sandbox's chain.
//   - floor: the operator's floor (package netfloor), which every packet
//     from a sandbox passes before its own chain: set "floor_allow" (the
//     operator's allowances) returns, set "floor" (link-local, private,
//     the host's networks, ...) is rejected. No egress policy reaches it.
//   - sb_<key>: the sandbox's egress policy, ending in accept or reject.
//     Rejects are TCP resets or ICMP admin-prohibited, so a blocked
//     connection fails at once instead of hanging.
//   - input: from sandboxes the host accepts only DNS to the gateway (and
//     answers to connections the host opened, such as the preview proxy).
//   - postrouting: masquerade what leaves the subnet.
//   - set "conns": the connections each sandbox address has open, counted
//     by the kernel (ct count). A new connection past the limit is
//     refused in forward and input, so one sandbox cannot fill the host's
//     conntrack table, which every sandbox and the host share.
//
// The table is changed only with `nft -f` scripts, each one kernel
// transaction, so no packet ever sees a half-applied policy.
type firewall struct {
	nft       string // path of the nft binary
	table     string
	bridge    string
	gw        netip.Addr
	subnet    netip.Prefix
	connLimit int // tracked connections per sandbox; 0 for no limit
	httpPort  int // the HTTP egress proxy's port; 0 for none (httpredirect.go)
	floor     *netfloor.Floor
}

func newFirewall(bridge string, gw netip.Addr, subnet netip.Prefix, connLimit int) (*firewall, error) {
	nft, err := exec.LookPath("nft")
	if err != nil {
		return nil, errdefs.Unavailable(wire.CodeNftUnavailable, "the nft command is not installed; install it with `apt-get install nftables`")
	}
	return &firewall{nft: nft, table: bridge, bridge: bridge, gw: gw, subnet: subnet, connLimit: connLimit}, nil
}

// run applies an nft script as one transaction.
func (f *firewall) run(ctx context.Context, script string) error {
	cmd := exec.CommandContext(ctx, f.nft, "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("nft: %v: %s", err, strings.TrimSpace(out.String()))
	}
	return nil
}

// ensureBase creates the table and replaces its base chains' rules. Maps,
// sets and sandbox chains already there are kept: running sandboxes keep
// their policies and learned addresses across a daemon restart.
func (f *firewall) ensureBase(ctx context.Context) error {
	t, br := "inet "+f.table, fmt.Sprintf("%q", f.bridge)
	var s strings.Builder
	line := func(format string, a ...any) { fmt.Fprintf(&s, format+"\n", a...) }
	line("add table %s", t)
	line("add map %s egress { type ipv4_addr : verdict ; }", t)
	line("add chain %s forward { type filter hook forward priority filter ; policy accept ; }", t)
	line("add chain %s input { type filter hook input priority filter ; policy accept ; }", t)
	line("add chain %s postrouting { type nat hook postrouting priority srcnat ; policy accept ; }", t)
	for _, c := range []string{"forward", "input", "postrouting"} {
		line("flush chain %s %s", t, c)
	}
	// Each element of "conns" keeps the limit it was made with, so the set
	// starts empty: connections open across a restart go uncounted until
	// they close (at worst twice the limit for a while).
	line("add set %s conns { type ipv4_addr ; size 65535 ; flags dynamic ; }", t)
	line("flush set %s conns", t)
	limit := func(chain string) {
		if f.connLimit > 0 {
			// port-unreachable: the caller sees "connection refused" at once.
			line("add rule %s %s iifname %s ct state new add @conns { ip saddr ct count over %d } reject with icmpx port-unreachable", t, chain, br, f.connLimit)
		}
	}
	line("add rule %s forward iifname %s oifname %s reject with icmpx admin-prohibited", t, br, br)
	limit("forward")
	limit("input")
	line("add rule %s forward oifname %s ct state established,related accept", t, br)
	line("add rule %s forward oifname %s drop", t, br)
	f.floorBase(line)
	line("add rule %s forward iifname %s jump floor", t, br)
	line("add rule %s forward iifname %s ct state established,related accept", t, br)
	line("add rule %s forward iifname %s meta nfproto != ipv4 drop", t, br)
	line("add rule %s forward iifname %s ip saddr vmap @egress", t, br)
	line("add rule %s forward iifname %s reject with icmpx admin-prohibited", t, br)
	line("add rule %s input iifname %s ct state established,related accept", t, br)
	line("add rule %s input iifname %s ip daddr %s meta l4proto { tcp, udp } th dport 53 accept", t, br, f.gw)
	f.httpRedirectBase(line)
	line("add rule %s input iifname %s meta l4proto tcp reject with tcp reset", t, br)
	line("add rule %s input iifname %s reject with icmpx admin-prohibited", t, br)
	line("add rule %s postrouting ip saddr %s oifname != %s masquerade", t, f.subnet, br)
	return f.run(ctx, s.String())
}

// floorBase fills the floor chain and its sets (see firewall). The host's
// networks are read now: the daemon's start fixes them (a restart picks up
// new ones; the egress proxy's own check reads them live).
func (f *firewall) floorBase(line func(string, ...any)) {
	t := "inet " + f.table
	deny := netfloor.Aggregate(append(f.floor.Deny(true), f.floor.HostPrefixes(f.subnet)...))
	var allow []netip.Prefix
	for _, p := range f.floor.Allow() {
		if p.Addr().Is4() {
			allow = append(allow, p)
		}
	}
	allow = netfloor.Aggregate(allow)
	for name, list := range map[string][]netip.Prefix{"floor": deny, "floor_allow": allow} {
		line("add set %s %s { type ipv4_addr ; flags interval ; }", t, name)
		line("flush set %s %s", t, name)
		var el []string
		for _, p := range list {
			if p.Addr().Is4() {
				el = append(el, p.String())
			}
		}
		if len(el) > 0 {
			line("add element %s %s { %s }", t, name, strings.Join(el, ", "))
		}
	}
	line("add chain %s floor", t)
	line("flush chain %s floor", t)
	line("add rule %s floor ip daddr @floor_allow return", t)
	line("add rule %s floor ip daddr @floor meta l4proto tcp reject with tcp reset", t)
	line("add rule %s floor ip daddr @floor reject with icmpx admin-prohibited", t)
}

// learnedAddr is an address the DNS server handed out for a name a domain
// rule matched, valid until expires.
type learnedAddr struct {
	ip      netip.Addr
	expires time.Time
}

// applySandbox installs or replaces the sandbox's chain for policy p and
// routes its address ip there. learned, when not nil, replaces the contents
// of the sandbox's DNS set (nil keeps them, as after a daemon restart).
func (f *firewall) applySandbox(ctx context.Context, id string, ip netip.Addr, e *policyRules, learned []learnedAddr) error {
	t := "inet " + f.table
	chain, nets, dnss := chainName(id), netSetName(id), dnsSetName(id)
	var s strings.Builder
	line := func(format string, a ...any) { fmt.Fprintf(&s, format+"\n", a...) }
	line("add chain %s %s", t, chain)
	line("add set %s %s { type ipv4_addr ; flags interval ; auto-merge ; }", t, nets)
	line("add set %s %s { type ipv4_addr ; flags timeout ; }", t, dnss)
	line("flush chain %s %s", t, chain)
	line("flush set %s %s", t, nets)
	if len(e.cidrs) > 0 {
		line("add element %s %s { %s }", t, nets, strings.Join(e.cidrs, ", "))
	}
	if learned != nil {
		line("flush set %s %s", t, dnss)
		if el := timeoutElements(learned, time.Now()); el != "" {
			line("add element %s %s { %s }", t, dnss, el)
		}
	}
	reject := func(match string) {
		line("add rule %s %s %s meta l4proto tcp reject with tcp reset", t, chain, match)
		line("add rule %s %s %s reject with icmpx admin-prohibited", t, chain, match)
	}
	if e.dnsOnlyViaGateway {
		// DNS to any other server would dodge the domain rules.
		reject("meta l4proto { tcp, udp } th dport { 53, 853 }")
	}
	switch e.mode {
	case AllowAll:
		line("add rule %s %s accept", t, chain)
	case BlockAll:
		reject("")
	case AllowList:
		line("add rule %s %s ip daddr @%s accept", t, chain, nets)
		line("add rule %s %s ip daddr @%s accept", t, chain, dnss)
		reject("")
	case DenyList:
		reject("ip daddr @" + nets)
		reject("ip daddr @" + dnss)
		line("add rule %s %s accept", t, chain)
	default:
		return errdefs.Internal(nil, "unknown egress mode %q", e.mode)
	}
	line("add element %s egress { %s : jump %s }", t, ip, chain)
	f.httpRedirectSandbox(line, ip, e.http)
	return f.run(ctx, s.String())
}

// policyRules is what the firewall needs of a policy.
type policyRules struct {
	mode              string
	cidrs             []string
	dnsOnlyViaGateway bool
	http              bool // redirect its HTTP(S) to the egress proxy
}

// timeoutElements formats set elements with their remaining lifetimes;
// expired ones are left out.
func timeoutElements(addrs []learnedAddr, now time.Time) string {
	var parts []string
	for _, a := range addrs {
		left := a.expires.Sub(now).Truncate(time.Second)
		if left < time.Second {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s timeout %ds", a.ip, int(left.Seconds())))
	}
	return strings.Join(parts, ", ")
}

// removeSandbox deletes the sandbox's chain, sets and map entries. Missing
// pieces are not an error.
func (f *firewall) removeSandbox(ctx context.Context, id string) error {
	t, chain := "inet "+f.table, chainName(id)
	ips, err := f.mapEntries(ctx)
	if err != nil {
		return err
	}
	var s strings.Builder
	line := func(format string, a ...any) { fmt.Fprintf(&s, format+"\n", a...) }
	for ip, target := range ips {
		if target == chain {
			line("delete element %s egress { %s }", t, ip)
			if a, err := netip.ParseAddr(ip); err == nil {
				f.httpRedirectSandbox(line, a, false)
			}
		}
	}
	// "add" first makes each delete valid whether or not the object exists.
	line("add chain %s %s", t, chain)
	line("delete chain %s %s", t, chain)
	s.WriteString(deleteSets(t, chain))
	return f.run(ctx, s.String())
}

// deleteSets deletes a chain's two sets, whether or not they exist.
func deleteSets(t, chain string) string {
	return fmt.Sprintf("add set %[1]s %[2]s_net { type ipv4_addr ; flags interval ; auto-merge ; }\ndelete set %[1]s %[2]s_net\n"+
		"add set %[1]s %[2]s_dns { type ipv4_addr ; flags timeout ; }\ndelete set %[1]s %[2]s_dns\n", t, chain)
}

// mapEntries returns the egress map: sandbox address → chain name.
func (f *firewall) mapEntries(ctx context.Context) (map[string]string, error) {
	out, err := exec.CommandContext(ctx, f.nft, "-j", "list", "map", "inet", f.table, "egress").Output()
	if err != nil {
		return nil, fmt.Errorf("nft list map: %w", err)
	}
	var doc struct {
		Nftables []struct {
			Map *struct {
				Elem [][2]json.RawMessage `json:"elem"`
			} `json:"map"`
		} `json:"nftables"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("parse nft output: %w", err)
	}
	m := map[string]string{}
	for _, item := range doc.Nftables {
		if item.Map == nil {
			continue
		}
		for _, el := range item.Map.Elem {
			var ip string
			var verdict struct {
				Jump struct{ Target string } `json:"jump"`
			}
			if json.Unmarshal(el[0], &ip) == nil && json.Unmarshal(el[1], &verdict) == nil {
				m[ip] = verdict.Jump.Target
			}
		}
	}
	return m, nil
}

// sandboxChains lists the names of the sandbox chains in the table.
func (f *firewall) sandboxChains(ctx context.Context) ([]string, error) {
	out, err := exec.CommandContext(ctx, f.nft, "-j", "list", "chains", "inet").Output()
	if err != nil {
		return nil, fmt.Errorf("nft list chains: %w", err)
	}
	var doc struct {
		Nftables []struct {
			Chain *struct{ Table, Name string } `json:"chain"`
		} `json:"nftables"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("parse nft output: %w", err)
	}
	var names []string
	for _, item := range doc.Nftables {
		if c := item.Chain; c != nil && c.Table == f.table && strings.HasPrefix(c.Name, "sb_") {
			names = append(names, c.Name)
		}
	}
	return names, nil
}

// removeChainByName deletes a sandbox chain found by Prune whose sandbox id
// is unknown: its map entries first, then the chain and its sets.
func (f *firewall) removeChainByName(ctx context.Context, chain string) error {
	ips, err := f.mapEntries(ctx)
	if err != nil {
		return err
	}
	t := "inet " + f.table
	var s strings.Builder
	for ip, target := range ips {
		if target == chain {
			fmt.Fprintf(&s, "delete element %s egress { %s }\n", t, ip)
		}
	}
	fmt.Fprintf(&s, "delete chain %s %s\n", t, chain)
	s.WriteString(deleteSets(t, chain))
	return f.run(ctx, s.String())
}

// destroy removes the whole table.
func (f *firewall) destroy(ctx context.Context) error {
	return f.run(ctx, fmt.Sprintf("add table inet %s\ndelete table inet %s\n", f.table, f.table))
}
