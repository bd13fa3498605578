package network

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// A sandbox's TCP connections all pass the host's connection tracking
// (to the gateway, or routed and masqueraded to the outside), so the host
// knows which of them are still open. Saving a gVisor sandbox needs that:
// Debian 12's runsc cannot save a TCP connection on a real interface unless
// it is fully closed, and a failed save ends the sandbox.

// gvisorTimeWait is how long gVisor's network stack keeps a connection in
// TIME_WAIT after it closed it, plus a margin for the two clocks.
const gvisorTimeWait = 62 * time.Second

// Conn is a TCP connection of a sandbox that is not closed.
type Conn struct {
	Local, Remote netip.AddrPort // as the sandbox sees them (before NAT)
	State         string         // conntrack's: ESTABLISHED, TIME_WAIT, …
	// Closing is, in TIME_WAIT, how long gVisor may still hold it.
	Closing time.Duration
}

func (c Conn) String() string {
	return fmt.Sprintf("%s ↔ %s (%s)", c.Local, c.Remote, c.State)
}

// OpenConns describes the TCP connections of the running bridge sandbox id
// that the host has not seen closed: open lists the established ones,
// which stay open until an end closes them; closing lists those on their
// way to closed, the last of which may take up to wait. A sandbox without
// a bridge network has none. The preview proxy's idle connections are
// closed first: the daemon's own keep-alive connections should not count.
func (m *Manager) OpenConns(id string) (open, closing []string, wait time.Duration, err error) {
	ip, ok := m.Address(id)
	if !ok {
		return nil, nil, 0, nil
	}
	m.transport.CloseIdleConnections()
	f, err := os.Open("/proc/net/nf_conntrack")
	if err != nil {
		return nil, nil, 0, fmt.Errorf("read the host's connection tracking: %w", err)
	}
	defer f.Close()
	conns, err := parseConntrack(f, ip, timeWaitTimeout())
	for _, c := range conns {
		if c.State == "ESTABLISHED" {
			open = append(open, c.String())
			continue
		}
		closing = append(closing, c.String())
		wait = max(wait, c.Closing, time.Second) // a handshake or close under way: look again soon
	}
	return open, closing, wait, err
}

// forgetConns removes the host's connection tracking entries of ip, whose
// sandbox is gone: the next sandbox given the address must not inherit
// them (OpenConns would take them for its own, and NAT state for its
// flows).
func forgetConns(ip netip.Addr) error {
	filters := make([]netlink.CustomConntrackFilter, 0, 2)
	for _, dir := range []netlink.ConntrackFilterType{netlink.ConntrackOrigSrcIP, netlink.ConntrackOrigDstIP} {
		f := &netlink.ConntrackFilter{}
		if err := f.AddIP(dir, ip.AsSlice()); err != nil {
			return err
		}
		filters = append(filters, f)
	}
	_, err := netlink.ConntrackDeleteFilters(netlink.ConntrackTable, unix.AF_INET, filters...)
	return err
}

// timeWaitTimeout is how long conntrack keeps a connection in TIME_WAIT.
func timeWaitTimeout() time.Duration {
	b, err := os.ReadFile("/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_time_wait")
	if err != nil {
		return 120 * time.Second // the kernel's default
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 120 * time.Second
	}
	return time.Duration(n) * time.Second
}

// parseConntrack reads /proc/net/nf_conntrack lines such as
//
//	ipv4 2 tcp 6 117 TIME_WAIT src=10.88.0.1 dst=10.88.0.2 sport=4711 dport=80 src=10.88.0.2 dst=10.88.0.1 sport=80 dport=4711 [ASSURED] mark=0 use=2
//
// and returns the TCP connections of ip that are not closed. The first
// src/dst pair is the connection as it began; the third column from the
// state is the seconds left before conntrack forgets it.
func parseConntrack(r io.Reader, ip netip.Addr, timeWait time.Duration) ([]Conn, error) {
	var out []Conn
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[2] != "tcp" {
			continue
		}
		left, err := strconv.Atoi(f[4])
		if err != nil {
			continue
		}
		state := f[5]
		kv := map[string]string{}
		for _, p := range f[6:] {
			k, v, ok := strings.Cut(p, "=")
			if ok && kv[k] == "" { // the first pair: the original direction
				kv[k] = v
			}
		}
		src, err1 := netip.ParseAddr(kv["src"])
		dst, err2 := netip.ParseAddr(kv["dst"])
		sport, err3 := strconv.ParseUint(kv["sport"], 10, 16)
		dport, err4 := strconv.ParseUint(kv["dport"], 10, 16)
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			continue
		}
		a, b := netip.AddrPortFrom(src, uint16(sport)), netip.AddrPortFrom(dst, uint16(dport))
		var c Conn
		switch ip {
		case src:
			c = Conn{Local: a, Remote: b, State: state}
		case dst:
			c = Conn{Local: b, Remote: a, State: state}
		default:
			continue
		}
		switch state {
		case "CLOSE":
			continue
		case "TIME_WAIT":
			// conntrack's TIME_WAIT started when gVisor's may have.
			since := timeWait - time.Duration(left)*time.Second
			if since >= gvisorTimeWait {
				continue
			}
			c.Closing = gvisorTimeWait - since
		}
		out = append(out, c)
	}
	return out, sc.Err()
}
