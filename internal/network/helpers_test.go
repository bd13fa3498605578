package network

import (
	"context"
	"fmt"
	"github.com/sbxhq/sbx/internal/auth"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/sbxhq/sbx/internal/store"
)

// The tests here send traffic only to namespaces and addresses they make:
// a "sandbox" is a namespace set up by Manager.Setup (no container), and
// the outside world is a namespace the test makes behind a veth of its own.

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
}

// freeSubnet picks a random /24 in 10.<second>.x.0 that no route overlaps.
func freeSubnet(t *testing.T, second int) netip.Prefix {
	t.Helper()
	for range 100 {
		p := netip.MustParsePrefix(fmt.Sprintf("10.%d.%d.0/24", second, rand.IntN(250)+1))
		if checkSubnetFree("none", p) == nil {
			return p
		}
	}
	t.Fatal("no free /24 found")
	return netip.Prefix{}
}

func randName(prefix string) string { return fmt.Sprintf("%s%06x", prefix, rand.IntN(1<<24)) }

// outside is a namespace standing for the rest of the world: it has two
// addresses, a and b, each with a TCP server on port 8080 that writes the
// address it was reached at. Its subnet is private: below the network
// floor unless a test's Config allows it.
type outside struct {
	ns     string
	a, b   netip.Addr
	subnet netip.Prefix
}

func newOutside(t *testing.T) *outside {
	t.Helper()
	net24 := freeSubnet(t, 250)
	hostAddr := net24.Addr().Next()
	o := &outside{ns: filepath.Join(t.TempDir(), "outside"), a: hostAddr.Next(), b: hostAddr.Next().Next(), subnet: net24}
	if err := createNetns(o.ns, false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeNetns(o.ns) })
	hostEnd := randName("sbxto")
	br, err := hostLink(t, hostEnd, o.ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeLink(hostEnd) })
	if err := netlink.AddrAdd(br, &netlink.Addr{IPNet: ipNet(netip.PrefixFrom(hostAddr, 24))}); err != nil {
		t.Fatal(err)
	}
	if err := netlink.LinkSetUp(br); err != nil {
		t.Fatal(err)
	}
	err = inNetns(o.ns, func() error {
		eth, err := netlink.LinkByName("eth0")
		if err != nil {
			return err
		}
		for _, a := range []netip.Addr{o.a, o.b} {
			if err := netlink.AddrAdd(eth, &netlink.Addr{IPNet: ipNet(netip.PrefixFrom(a, 24))}); err != nil {
				return err
			}
		}
		if lo, err := netlink.LinkByName("lo"); err == nil {
			netlink.LinkSetUp(lo)
		}
		return netlink.LinkSetUp(eth)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []netip.Addr{o.a, o.b} {
		serveIn(t, o.ns, netip.AddrPortFrom(a, 8080))
	}
	return o
}

func hostLink(t *testing.T, name, nsPath string) (netlink.Link, error) {
	ns, err := netns.GetFromPath(nsPath)
	if err != nil {
		return nil, err
	}
	defer ns.Close()
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name}, PeerName: "eth0", PeerNamespace: netlink.NsFd(int(ns))}
	if err := netlink.LinkAdd(veth); err != nil {
		return nil, err
	}
	return netlink.LinkByName(name)
}

// serveIn runs a TCP server in the namespace at nsPath that answers every
// connection with the address it was reached at.
func serveIn(t *testing.T, nsPath string, at netip.AddrPort) {
	t.Helper()
	var ln net.Listener
	err := inNetns(nsPath, func() (err error) {
		ln, err = net.Listen("tcp4", at.String())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fmt.Fprint(c, at.Addr())
			c.Close()
		}
	}()
}

// connectFrom connects from the namespace at nsPath to addr and returns
// what the server said.
func connectFrom(nsPath string, addr netip.AddrPort) (string, error) {
	var got string
	err := inNetns(nsPath, func() error {
		c, err := net.DialTimeout("tcp4", addr.String(), 5*time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		b := make([]byte, 64)
		n, _ := c.Read(b)
		got = string(b[:n])
		return nil
	})
	return got, err
}

// lookupFrom asks the DNS server at server from inside the namespace.
func lookupFrom(nsPath string, server netip.Addr, name string) (rcode int, ips []netip.Addr, err error) {
	err = inNetns(nsPath, func() error {
		m := new(dns.Msg)
		m.SetQuestion(dns.Fqdn(name), dns.TypeA)
		c := &dns.Client{Timeout: 5 * time.Second}
		resp, _, err := c.Exchange(m, net.JoinHostPort(server.String(), "53"))
		if err != nil {
			return err
		}
		rcode = resp.Rcode
		ips, _, _ = answerAddrs(resp)
		return nil
	})
	return rcode, ips, err
}

// fakeUpstream is a DNS server on loopback with a table the test controls.
type fakeUpstream struct {
	mu    sync.Mutex
	names map[string]netip.Addr
	addr  string
}

func newFakeUpstream(t *testing.T) *fakeUpstream {
	t.Helper()
	u := &fakeUpstream{names: map[string]netip.Addr{}}
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u.addr = pc.LocalAddr().String()
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(u.serve)}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return u
}

func (u *fakeUpstream) set(name string, a netip.Addr) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.names[name] = a
}

func (u *fakeUpstream) serve(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	u.mu.Lock()
	a, ok := u.names[canonical(req.Question[0].Name)]
	u.mu.Unlock()
	if !ok {
		m.Rcode = dns.RcodeNameError
	} else if req.Question[0].Qtype == dns.TypeA {
		m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: req.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 5}, A: a.AsSlice()})
	}
	w.WriteMsg(m)
}

// testStore is a fresh SQLite store holding sandbox records for ids.
func testStore(t *testing.T, ids ...string) *store.SQLite {
	t.Helper()
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "sbx.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for _, id := range ids {
		if err := st.CreateSandbox(auth.System(context.Background(), "test"), &store.Sandbox{ID: id, State: "started"}); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func ipNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), 32)}
}
