// Package netfloor is the operator's network floor: the addresses nothing
// may reach on a tenant's behalf, whatever the tenant's egress policy says.
// It is one list, enforced in two places:
//
//   - package network puts its IPv4 ranges in the daemon's nftables table,
//     before any sandbox's own chain, so a sandbox's packets (and its SSH
//     port forwards, which the agent dials inside the sandbox) obey it in
//     every egress mode, allow-all included;
//   - Check and Control refuse the same addresses when the daemon dials
//     from the host for a tenant: the HTTP egress proxy's upstreams,
//     forward rules' handlers, team webhooks, bucket endpoints and image
//     registries. Control
//     runs on the address actually dialled, so a name that resolves to a
//     public address when checked and a private one when dialled (DNS
//     rebinding) is refused too.
//
// The floor holds loopback, link-local (the cloud metadata address
// 169.254.169.254 and fd00:ec2::254 among them), RFC 1918, shared (CGNAT)
// and ULA ranges, multicast and reserved ranges, the host's own addresses
// and networks, and what the operator adds (a cluster's pod and service
// CIDRs). The operator lifts parts of it with Config.Allow
// (`sbx serve --egress-allow-private`).
package netfloor

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Ranges is the built-in floor.
var Ranges = mustPrefixes(
	"0.0.0.0/8",      // "this network"
	"10.0.0.0/8",     // RFC 1918
	"100.64.0.0/10",  // shared address space (CGNAT; some clouds' metadata)
	"127.0.0.0/8",    // loopback
	"169.254.0.0/16", // link-local: cloud metadata
	"172.16.0.0/12",  // RFC 1918
	"192.168.0.0/16", // RFC 1918
	"224.0.0.0/4",    // multicast
	"240.0.0.0/4",    // reserved, broadcast
	"::/128",         // unspecified
	"::1/128",        // loopback
	"fc00::/7",       // ULA (fd00:ec2::254, the AWS IPv6 metadata address)
	"fe80::/10",      // link-local
	"ff00::/8",       // multicast
)

// Config configures a Floor.
type Config struct {
	// Allow lifts these ranges out of the floor (a LAN the sandboxes may
	// reach, a loopback S3 server for bucket mounts).
	Allow []netip.Prefix
	// Deny adds ranges to the floor (a cluster's pod and service CIDRs).
	Deny []netip.Prefix
	// NoHost leaves the host's own addresses and networks out (tests).
	NoHost bool
}

// Floor decides whether an address is below the floor.
type Floor struct {
	allow, deny []netip.Prefix
	host        bool // the host's addresses and networks are below it
}

// New returns the floor of cfg.
func New(cfg Config) *Floor {
	f := &Floor{deny: slices.Concat(Ranges, cfg.Deny)}
	for _, p := range cfg.Allow {
		f.allow = append(f.allow, p.Masked())
	}
	f.host = !cfg.NoHost
	return f
}

// ParsePrefixes parses a list of CIDRs or addresses (an address is a
// single-address prefix), as given to a flag.
func ParsePrefixes(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if a, err := netip.ParseAddr(s); err == nil {
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR such as 10.0.0.0/8 or an address", s)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

var std atomic.Pointer[Floor]

// Default is the daemon's floor: what SetDefault set, else the built-in
// floor with no allowances.
func Default() *Floor {
	if f := std.Load(); f != nil {
		return f
	}
	f := New(Config{})
	std.CompareAndSwap(nil, f)
	return std.Load()
}

// SetDefault makes f the daemon's floor (the daemon calls it at start).
func SetDefault(f *Floor) { std.Store(f) }

// Allowed reports whether the operator lifted a out of the floor.
func (f *Floor) Allowed(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range f.allow {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Check returns an error when a is below the floor.
func (f *Floor) Check(a netip.Addr) error {
	a = a.Unmap()
	if !a.IsValid() || f.Allowed(a) {
		return nil
	}
	if v4, ok := embedded4(a); ok {
		if err := f.Check(v4); err != nil {
			return refused(a, "it leads to "+v4.String())
		}
	}
	for _, p := range f.deny {
		if p.Contains(a) {
			return refused(a, p.String())
		}
	}
	if f.host {
		if p, ok := host.contains(a); ok {
			return refused(a, "the host's network "+p.String())
		}
	}
	if a.IsLinkLocalUnicast() || a.IsLoopback() || a.IsUnspecified() || a.IsMulticast() || a.IsPrivate() {
		return refused(a, "a non-public range") // IPv4-compatible and other forms the list misses
	}
	return nil
}

// The IPv6 forms that carry an IPv4 address a host may translate to:
// NAT64 (64:ff9b::/96, RFC 6052) and 6to4 (2002::/16, RFC 3056).
var nat64, sixToFour = netip.MustParsePrefix("64:ff9b::/96"), netip.MustParsePrefix("2002::/16")

func embedded4(a netip.Addr) (netip.Addr, bool) {
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

func refused(a netip.Addr, why string) error {
	return fmt.Errorf("%s is below the operator's network floor (%s); the operator may allow it with sbx serve --egress-allow-private", a, why)
}

// CheckURL checks the host of an http(s) URL a tenant gave, when it is an
// address or localhost: a name is checked where it is dialled (Control).
func (f *Floor) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	h := strings.ToLower(u.Hostname())
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return f.Check(netip.AddrFrom4([4]byte{127, 0, 0, 1}))
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return f.Check(a)
	}
	return nil
}

// CheckHost resolves host (a name or an address) and checks every address
// it has: for targets a tool other than the daemon dials (s3fs), where
// Control cannot run.
func (f *Floor) CheckHost(ctx context.Context, host string) error {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return f.Check(a)
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("resolve %s: %w", host, err)
	}
	for _, a := range addrs {
		if err := f.Check(a); err != nil {
			return fmt.Errorf("%s: %w", host, err)
		}
	}
	return nil
}

// Control is a net.Dialer Control hook that refuses addresses below the
// floor: it sees the address the kernel is about to connect to.
func (f *Floor) Control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s: %w", address, err)
	}
	return f.Check(ap.Addr())
}

// Client is an HTTP client for requests the daemon makes on a tenant's
// behalf: it dials nothing below the floor and follows no redirects (a
// redirect's answer is returned as it is).
func (f *Floor) Client(timeout time.Duration) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second, Control: f.Control}
	return &http.Client{
		Timeout:       timeout,
		Transport:     &http.Transport{Proxy: nil, DialContext: d.DialContext, MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// HostPrefixes are the host's own addresses and networks, without the
// ones the operator allowed and without skip (the sandboxes' own subnet).
func (f *Floor) HostPrefixes(skip netip.Prefix) []netip.Prefix {
	if !f.host {
		return nil
	}
	var out []netip.Prefix
	for _, p := range host.list() {
		if p.Overlaps(skip) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// Deny is the floor's ranges (built-in and added) of one family.
func (f *Floor) Deny(v4 bool) []netip.Prefix {
	var out []netip.Prefix
	for _, p := range f.deny {
		if p.Addr().Is4() == v4 {
			out = append(out, p)
		}
	}
	return out
}

// Allow is the operator's allowances.
func (f *Floor) Allow() []netip.Prefix { return slices.Clone(f.allow) }

// IsHostAddr reports whether a is one of the host's own addresses.
func IsHostAddr(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range host.list() {
		if p.IsSingleIP() && p.Addr() == a {
			return true
		}
	}
	return false
}

var host = &hostNets{}

// hostNets are the host's interface addresses as prefixes (address and
// network), read again at most every few seconds: interfaces come and go.
type hostNets struct {
	mu   sync.Mutex
	at   time.Time
	nets []netip.Prefix
}

func (h *hostNets) list() []netip.Prefix {
	h.mu.Lock()
	defer h.mu.Unlock()
	if time.Since(h.at) > 5*time.Second {
		h.nets = nil
		if list, err := net.InterfaceAddrs(); err == nil {
			for _, ia := range list {
				if p, err := netip.ParsePrefix(ia.String()); err == nil {
					a := p.Addr().Unmap()
					h.nets = append(h.nets, netip.PrefixFrom(a, a.BitLen()))
					if !a.IsLoopback() && !a.IsLinkLocalUnicast() {
						h.nets = append(h.nets, p.Masked())
					}
				}
			}
		}
		h.at = time.Now()
	}
	return h.nets
}

func (h *hostNets) contains(a netip.Addr) (netip.Prefix, bool) {
	for _, p := range h.list() {
		if p.Contains(a) {
			return p, true
		}
	}
	return netip.Prefix{}, false
}

func mustPrefixes(list ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(list))
	for i, s := range list {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// Aggregate drops the prefixes another one of list contains, and sorts
// the rest: nftables refuses overlapping intervals in one set.
func Aggregate(list []netip.Prefix) []netip.Prefix {
	var out []netip.Prefix
	for i, p := range list {
		inside := false
		for j, q := range list {
			if i != j && q.Bits() <= p.Bits() && q.Contains(p.Addr()) && (q.Bits() < p.Bits() || j < i) {
				inside = true
				break
			}
		}
		if !inside {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b netip.Prefix) int { return a.Addr().Compare(b.Addr()) })
	return out
}
