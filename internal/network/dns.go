package network

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// DNS: every bridge sandbox's /etc/resolv.conf names the gateway, where the
// daemon answers. It knows the asking sandbox by its source address, applies
// that sandbox's domain rules, and asks the upstream resolvers. Before it
// answers a name a domain rule matched, it puts the answer's addresses in the
// sandbox's DNS set for the answer's TTL: the firewall then allows (or, for
// a deny-list, blocks) exactly the addresses the name has now.

// Bounds of how long a learned address stays in a sandbox's set. The floor
// covers clients that cache an answer a little past its TTL.
const (
	minLearnTTL = 60 * time.Second
	maxLearnTTL = 24 * time.Hour
)

// dnsServer serves DNS on the gateway address over UDP and TCP.
type dnsServer struct {
	udp, tcp *dns.Server
	pc       net.PacketConn
	ln       net.Listener
}

// startDNS listens on addr (the gateway, port 53) and serves h.
func startDNS(addr string, h dns.Handler) (*dnsServer, error) {
	pc, err := net.ListenPacket("udp4", addr)
	if err != nil {
		return nil, fmt.Errorf("DNS server: %w", err)
	}
	ln, err := net.Listen("tcp4", addr)
	if err != nil {
		pc.Close()
		return nil, fmt.Errorf("DNS server: %w", err)
	}
	s := &dnsServer{
		udp: &dns.Server{PacketConn: pc, Handler: h},
		tcp: &dns.Server{Listener: ln, Handler: h, ReadTimeout: 5 * time.Second},
		pc:  pc, ln: ln,
	}
	go s.udp.ActivateAndServe()
	go s.tcp.ActivateAndServe()
	return s, nil
}

func (s *dnsServer) close() {
	s.udp.Shutdown()
	s.tcp.Shutdown()
	// A Shutdown that comes before its server's goroutine started is
	// refused ("server not started") and closes nothing; closing the
	// sockets here frees port 53 for the next start either way.
	s.pc.Close()
	s.ln.Close()
}

// exchange asks the upstream resolvers in turn. A truncated UDP answer is
// asked again over TCP.
func exchange(ctx context.Context, upstreams []string, req *dns.Msg, proto string) (*dns.Msg, error) {
	if len(upstreams) == 0 {
		return nil, errors.New("no upstream DNS server configured")
	}
	var last error
	for _, up := range upstreams {
		c := &dns.Client{Net: proto, Timeout: 3 * time.Second}
		resp, _, err := c.ExchangeContext(ctx, req.Copy(), up)
		if err == nil && resp.Truncated && proto == "udp" {
			c.Net = "tcp"
			resp, _, err = c.ExchangeContext(ctx, req.Copy(), up)
		}
		if err == nil {
			return resp, nil
		}
		last = err
	}
	return nil, last
}

// systemUpstreams reads the host's resolvers from /etc/resolv.conf.
func systemUpstreams() []string {
	cfg, err := dns.ClientConfigFromFile("/etc/resolv.conf")
	if err != nil {
		return nil
	}
	var out []string
	for _, s := range cfg.Servers {
		out = append(out, net.JoinHostPort(s, cfg.Port))
	}
	return out
}

// answerAddrs returns the IPv4 addresses in an answer, the names it
// mentions (owners and CNAME targets), and its smallest TTL.
func answerAddrs(m *dns.Msg) (ips []netip.Addr, names []string, ttl time.Duration) {
	ttl = maxLearnTTL
	for _, rr := range m.Answer {
		h := rr.Header()
		names = append(names, canonical(h.Name))
		if d := time.Duration(h.Ttl) * time.Second; d < ttl {
			ttl = d
		}
		switch r := rr.(type) {
		case *dns.A:
			if a, ok := netip.AddrFromSlice(r.A); ok {
				ips = append(ips, a.Unmap())
			}
		case *dns.CNAME:
			names = append(names, canonical(r.Target))
		}
	}
	return ips, names, ttl
}

// capTTL lowers every TTL of an answer to at most d, so no client caches an
// address longer than the firewall allows it.
func capTTL(m *dns.Msg, d time.Duration) {
	limit := uint32(d / time.Second)
	for _, rr := range m.Answer {
		if rr.Header().Ttl > limit {
			rr.Header().Ttl = limit
		}
	}
}

func canonical(name string) string {
	return strings.TrimSuffix(strings.ToLower(name), ".")
}

func reply(w dns.ResponseWriter, req *dns.Msg, rcode int) {
	m := new(dns.Msg)
	m.SetRcode(req, rcode)
	m.RecursionAvailable = true
	w.WriteMsg(m)
}

// serveDNS answers a sandbox's query under its egress policy.
func (m *Manager) serveDNS(w dns.ResponseWriter, req *dns.Msg) {
	src, _ := netip.ParseAddrPort(w.RemoteAddr().String())
	mem := m.memberAt(src.Addr().Unmap())
	if mem == nil || req.Opcode != dns.OpcodeQuery || len(req.Question) != 1 {
		reply(w, req, dns.RcodeRefused)
		return
	}
	name := canonical(req.Question[0].Name)
	mem.mu.Lock()
	v := mem.policy.verdict(name)
	mem.mu.Unlock()
	if v == dnsRefuse {
		reply(w, req, dns.RcodeRefused)
		return
	}
	proto := "udp"
	if _, ok := w.RemoteAddr().(*net.TCPAddr); ok {
		proto = "tcp"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := exchange(ctx, m.cfg.DNSUpstreams, req, proto)
	if err != nil {
		m.log.Debug("upstream DNS", "name", name, "err", err)
		reply(w, req, dns.RcodeServerFailure)
		return
	}
	ips, names, ttl := answerAddrs(resp)
	ttl = min(max(ttl, minLearnTTL), maxLearnTTL)

	// The learner decides again under the sandbox's current policy (it may
	// have changed while upstream answered) as it changes the DNS set.
	switch m.learnAnswer(ctx, mem, &learnReq{name: name, names: names, ips: ips, ttl: ttl}) {
	case dnsRefuse, dnsDeny:
		reply(w, req, dns.RcodeRefused)
		return
	case dnsServFail:
		reply(w, req, dns.RcodeServerFailure)
		return
	case dnsAllow:
		capTTL(resp, ttl)
	}
	resp.Id = req.Id
	w.WriteMsg(resp)
}
