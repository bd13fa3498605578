package integration

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
	"golang.org/x/net/websocket"
	"golang.org/x/sys/unix"
	_ "modernc.org/sqlite"

	"github.com/sbxhq/sbx/sdk"
)

// Every network test sends traffic only to loopback, to the sandboxes it
// made and to an "outside" namespace it made itself (ip netns, a veth to
// the host). Names resolve through a DNS server the test runs on loopback.
// Each daemon gets a bridge and a subnet of its own, so tests (and other
// test runs on the host) never share one.

// netArgs are the networking flags of a test daemon: its own bridge and
// subnet, and a DNS upstream on loopback that answers nothing unless the
// test passes its own --dns-upstream.
func netArgs(t *testing.T, extra []string) []string {
	args := []string{"--bridge", fmt.Sprintf("sbxt%06x", rand.IntN(1<<24)), "--subnet", freeSubnet(t).String()}
	if !slices.Contains(extra, "--dns-upstream") {
		args = append(args, "--dns-upstream", "127.0.0.1:9")
	}
	return append(args, extra...)
}

// freeSubnet picks a random /24 in 10.128.0.0/9 that no route of the host
// overlaps.
func freeSubnet(t *testing.T) netip.Prefix {
	t.Helper()
	out, err := exec.Command("ip", "-4", "route", "show", "table", "all").Output()
	if err != nil {
		t.Fatal(err)
	}
	var routes []netip.Prefix
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		dst := f[0]
		if dst == "local" || dst == "broadcast" {
			dst = f[1]
		}
		if !strings.Contains(dst, "/") {
			dst += "/32"
		}
		if p, err := netip.ParsePrefix(dst); err == nil && p.Bits() > 0 {
			routes = append(routes, p)
		}
	}
next:
	for range 1000 {
		p := netip.MustParsePrefix(fmt.Sprintf("10.%d.%d.0/24", 128+rand.IntN(64), rand.IntN(256)))
		for _, r := range routes {
			if r.Overlaps(p) {
				continue next
			}
		}
		return p
	}
	t.Fatal("no free /24 for a test subnet")
	return netip.Prefix{}
}

func (d *daemon) flag(name string) string {
	if i := slices.Index(d.args, name); i >= 0 && i+1 < len(d.args) {
		return d.args[i+1]
	}
	return ""
}

// removeNetwork deletes the daemon's bridge and firewall table once it is gone.
func (d *daemon) removeNetwork() {
	if b := d.flag("--bridge"); b != "" {
		exec.Command("nft", "delete", "table", "inet", b).Run()
		exec.Command("ip", "link", "del", b).Run()
	}
}

// assertNoNetworkLeaks checks that no veth, namespace, rule, lease or
// exposed port outlives the sandboxes.
func (d *daemon) assertNoNetworkLeaks() {
	t := d.t
	t.Helper()
	b := d.flag("--bridge")
	if out, _ := exec.Command("ip", "-o", "link", "show", "master", b).Output(); len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("leaked veths on %s:\n%s", b, out)
	}
	if entries, _ := os.ReadDir(filepath.Join(d.dataDir, "network")); len(entries) > 0 {
		t.Errorf("leaked network directories (namespaces): %d", len(entries))
	}
	if out, err := exec.Command("nft", "list", "table", "inet", b).CombinedOutput(); err == nil {
		if strings.Contains(string(out), "sb_") {
			t.Errorf("leaked sandbox rules in table inet %s:\n%s", b, out)
		}
	}
	// The host's connection tracking forgets a sandbox's flows with it: the
	// next sandbox given its address must not inherit them.
	if subnet, err := netip.ParsePrefix(d.flag("--subnet")); err == nil {
		table, _ := os.ReadFile("/proc/net/nf_conntrack")
		for _, line := range strings.Split(string(table), "\n") {
			for _, f := range strings.Fields(line) {
				_, v, ok := strings.Cut(f, "=")
				if a, err := netip.ParseAddr(v); ok && err == nil && subnet.Contains(a) && a != subnet.Addr().Next() {
					t.Errorf("connection tracking entry of a deleted sandbox: %s", line)
					break
				}
			}
		}
	}
	db, err := sql.Open("sqlite", filepath.Join(d.dataDir, "sbx.db")+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, table := range []string{"leases", "ports"} {
		var n int
		if err := db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
			t.Errorf("count %s: %v", table, err)
		} else if n > 0 {
			t.Errorf("leaked %s rows: %d", table, n)
		}
	}
}

// outsideNet is a namespace the test makes to stand for the world beyond
// the host: addresses a and b, each with an HTTP server on port 8080 that
// serves its own letter ("A" or "B").
// Its subnet is private, below the daemon's network floor: a test daemon
// whose sandboxes reach it gets --egress-allow-private <subnet>.
type outsideNet struct {
	a, b   netip.Addr
	ns     string // the namespace's name (ip netns)
	subnet netip.Prefix
}

func newOutside(t *testing.T) *outsideNet {
	t.Helper()
	subnet := freeSubnet(t)
	host := subnet.Addr().Next()
	o := &outsideNet{a: host.Next(), b: host.Next().Next(), subnet: subnet}
	ns := fmt.Sprintf("sbxt-out-%06x", rand.IntN(1<<24))
	o.ns = ns
	veth := fmt.Sprintf("sbxo%06x", rand.IntN(1<<24))
	mustRun(t, "ip", "netns", "add", ns)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	mustRun(t, "ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
	t.Cleanup(func() { exec.Command("ip", "link", "del", veth).Run() })
	mustRun(t, "ip", "addr", "add", host.String()+"/24", "dev", veth)
	mustRun(t, "ip", "link", "set", veth, "up")
	mustRun(t, "ip", "-n", ns, "addr", "add", o.a.String()+"/24", "dev", "eth0")
	mustRun(t, "ip", "-n", ns, "addr", "add", o.b.String()+"/24", "dev", "eth0")
	mustRun(t, "ip", "-n", ns, "link", "set", "eth0", "up")
	mustRun(t, "ip", "-n", ns, "link", "set", "lo", "up")
	for addr, letter := range map[netip.Addr]string{o.a: "A", o.b: "B"} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "index.html"), []byte(letter), 0o644)
		srv := exec.Command("ip", "netns", "exec", ns, "busybox", "httpd", "-f", "-p", addr.String()+":8080", "-h", dir)
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
		waitFor(t, 10*time.Second, "outside server "+letter, func() bool {
			resp, err := http.Get("http://" + addr.String() + ":8080/")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return true
		})
	}
	return o
}

// mustRun runs a command of the test's own network set-up.
func mustRun(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
}

// testDNS is a DNS server on loopback serving a table the test controls.
type testDNS struct {
	mu      sync.Mutex
	names   map[string]netip.Addr
	addr    string
	queries int // how many queries reached it
	// any, when set, answers names the table does not have.
	any func(name string) (netip.Addr, bool)
}

func newTestDNS(t *testing.T) *testDNS {
	t.Helper()
	s := &testDNS{names: map[string]netip.Addr{}}
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = pc.LocalAddr().String()
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, req *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(req)
		q := req.Question[0]
		s.mu.Lock()
		s.queries++
		a, ok := s.names[strings.TrimSuffix(q.Name, ".")]
		if !ok && s.any != nil {
			a, ok = s.any(strings.TrimSuffix(q.Name, "."))
		}
		s.mu.Unlock()
		switch {
		case !ok:
			m.Rcode = dns.RcodeNameError
		case q.Qtype == dns.TypeA:
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: a.AsSlice()})
		}
		w.WriteMsg(m)
	})}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return s
}

// count is how many queries reached the server so far.
func (s *testDNS) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queries
}

func (s *testDNS) set(name string, a netip.Addr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.names[name] = a
}

// fetch runs wget in the sandbox and returns the body, or the error text.
func (d *daemon) fetch(sb, url string) (string, bool) {
	d.t.Helper()
	// No -T: Debian's static busybox wget crashes with it. The exec
	// timeout guards against a hang instead.
	res, err := d.client.Exec(context.Background(), sb, sdk.ExecRequest{Cmd: []string{"wget", "-q", "-O", "-", url}, TimeoutSeconds: 30})
	if err != nil {
		d.t.Fatalf("exec wget: %v", err)
	}
	if res.ExitCode != 0 {
		return res.Stderr, false
	}
	return res.Stdout, true
}

func (d *daemon) mustFetch(sb, url, want string) {
	d.t.Helper()
	if got, ok := d.fetch(sb, url); !ok || got != want {
		d.t.Fatalf("wget %s from %s: %q (ok=%t), want %q", url, sb, got, ok, want)
	}
}

// mustBeRefused checks that a connection from sb to url is refused at once
// (a TCP reset from the firewall), not left to time out.
func (d *daemon) mustBeRefused(sb, url string) {
	d.t.Helper()
	got, ok := d.fetch(sb, url)
	if ok || !strings.Contains(got, "refused") {
		d.t.Fatalf("wget %s from %s: %q (ok=%t), want connection refused", url, sb, got, ok)
	}
}

func (d *daemon) setEgress(sb string, p sdk.EgressPolicy) {
	d.t.Helper()
	if _, err := d.client.SetEgress(context.Background(), sb, p); err != nil {
		d.t.Fatalf("set egress %+v: %v", p, err)
	}
}

func TestNetworkEgress(t *testing.T) {
	out := newOutside(t)
	names := newTestDNS(t)
	names.set("allowed.test", out.a)
	names.set("other.test", out.b)
	d := startDaemon(t, "--egress-allow-private", out.subnet.String(), "--dns-upstream", names.addr)
	ctx := context.Background()
	urlA, urlB := "http://"+out.a.String()+":8080/", "http://"+out.b.String()+":8080/"

	sb := d.create(sdk.CreateSandboxRequest{Name: "egress", Egress: &sdk.EgressPolicy{Mode: sdk.EgressBlockAll}})
	if sb.Network != sdk.NetworkBridge || sb.Egress == nil || sb.Egress.Mode != sdk.EgressBlockAll {
		t.Fatalf("created sandbox: network %q egress %+v", sb.Network, sb.Egress)
	}
	d.mustBeRefused("egress", urlA)

	// Live changes reach the running sandbox.
	d.setEgress("egress", sdk.EgressPolicy{Mode: sdk.EgressAllowList, CIDRs: []string{out.a.String()}})
	d.mustFetch("egress", urlA, "A")
	d.mustBeRefused("egress", urlB)

	d.setEgress("egress", sdk.EgressPolicy{Mode: sdk.EgressAllowList, Domains: []string{"allowed.test"}})
	d.mustFetch("egress", "http://allowed.test:8080/", "A")
	d.mustBeRefused("egress", urlB)
	if got, ok := d.fetch("egress", "http://other.test:8080/"); ok {
		t.Fatalf("a name off the allow-list resolved and answered: %q", got)
	}
	// The name moves to b: the rule follows it.
	names.set("allowed.test", out.b)
	d.mustFetch("egress", "http://allowed.test:8080/", "B")

	// The policy survives a stop and start, and a daemon crash.
	if _, err := d.client.StopSandbox(ctx, "egress", sdk.StopOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.client.StartSandbox(ctx, "egress"); err != nil {
		t.Fatal(err)
	}
	names.set("allowed.test", out.a)
	d.mustFetch("egress", "http://allowed.test:8080/", "A")
	d.mustBeRefused("egress", urlB)
	d.kill9()
	d.start()
	d.mustBeRefused("egress", urlB)
	d.mustFetch("egress", "http://allowed.test:8080/", "A")

	if stdout, stderr, code := d.sbx("", "egress", "set", "egress", "--deny", out.a.String()+"/32"); code != 0 || !strings.Contains(stdout, "deny-list") {
		t.Fatalf("sbx egress set: %d %q %q", code, stdout, stderr)
	}
	d.mustBeRefused("egress", urlA)
	d.mustFetch("egress", urlB, "B")

	info, err := d.client.GetNetwork(ctx, "egress")
	if err != nil || info.Egress.Mode != sdk.EgressDenyList || info.Address == "" || info.Gateway == "" {
		t.Fatalf("network info: %+v, %v", info, err)
	}

	// Bad policies change nothing.
	status, e := d.call("PUT", "/v1/sandboxes/egress/egress", `{"mode":"allow-list","cidrs":["not-a-cidr"]}`)
	if status != 400 || e.Code != "INVALID_EGRESS" {
		t.Fatalf("bad policy: %d %+v", status, e)
	}
	d.mustBeRefused("egress", urlA)
}

// TestNetworkDNSNoTunnel: an allow-list of CIDRs only allows no names, so
// the gateway resolves none and asks upstream nothing; a sandbox cannot
// smuggle data out in query names.
func TestNetworkDNSNoTunnel(t *testing.T) {
	out := newOutside(t)
	names := newTestDNS(t)
	names.set("allowed.test", out.a)
	d := startDaemon(t, "--egress-allow-private", out.subnet.String(), "--dns-upstream", names.addr)
	d.create(sdk.CreateSandboxRequest{Name: "cidrs", Egress: &sdk.EgressPolicy{Mode: sdk.EgressAllowList, CIDRs: []string{out.a.String()}}})
	lookup := func(name string) (string, bool) {
		res, err := d.client.Exec(context.Background(), "cidrs", sdk.ExecRequest{Cmd: []string{"nslookup", name}, TimeoutSeconds: 30})
		if err != nil {
			t.Fatalf("exec nslookup: %v", err)
		}
		return res.Stdout + res.Stderr, res.ExitCode == 0 && strings.Contains(res.Stdout, out.a.String())
	}
	for _, name := range []string{"allowed.test", "c2VjcmV0.exfil.test"} {
		if got, ok := lookup(name); ok {
			t.Fatalf("%s resolved under a CIDR-only allow-list: %s", name, got)
		}
	}
	if n := names.count(); n != 0 {
		t.Fatalf("the gateway asked upstream %d times under a policy that allows no names", n)
	}
	d.mustFetch("cidrs", "http://"+out.a.String()+":8080/", "A") // the CIDR still works
	// Allowing the name resolves it (and proves the counter counts).
	d.setEgress("cidrs", sdk.EgressPolicy{Mode: sdk.EgressAllowList, CIDRs: []string{out.a.String()}, Domains: []string{"allowed.test"}})
	if got, ok := lookup("allowed.test"); !ok || names.count() == 0 {
		t.Fatalf("an allowed name did not resolve: %s (upstream queries %d)", got, names.count())
	}
}

// TestNetworkConnLimit: a sandbox past --max-conns-per-sandbox open
// connections gets new ones refused, so it cannot fill the host's conntrack
// table; another sandbox is unaffected, and closing connections frees room.
func TestNetworkConnLimit(t *testing.T) {
	const limit = 8
	out := newOutside(t)
	d := startDaemon(t, "--egress-allow-private", out.subnet.String(), "--max-conns-per-sandbox", fmt.Sprint(limit))
	ctx := context.Background()
	a := d.create(sdk.CreateSandboxRequest{Name: "a"})
	d.create(sdk.CreateSandboxRequest{Name: "b"})
	info, err := d.client.GetNetwork(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	urlA := "http://" + out.a.String() + ":8080/"
	// busybox httpd holds a connection that sends no request for 60 s.
	hold := fmt.Sprintf("for i in $(seq %d); do (sleep 300 | nc %s 8080 2>>/tmp/nc.err) >/dev/null 2>&1 & done", limit+4, out.a)
	if res, err := d.client.Exec(ctx, "a", sdk.ExecRequest{Shell: hold}); err != nil || res.ExitCode != 0 {
		t.Fatalf("open connections: %+v %v", res, err)
	}
	refused := func() int {
		res, err := d.client.Exec(ctx, "a", sdk.ExecRequest{Shell: "grep -c refused /tmp/nc.err"})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		fmt.Sscan(res.Stdout, &n)
		return n
	}
	established := func() int {
		table, _ := os.ReadFile("/proc/net/nf_conntrack")
		n := 0
		for _, line := range strings.Split(string(table), "\n") {
			if strings.Contains(line, "ESTABLISHED") && strings.Contains(line, "src="+info.Address+" ") && strings.Contains(line, "dport=8080 ") {
				n++
			}
		}
		return n
	}
	waitFor(t, 30*time.Second, "connections past the limit refused", func() bool {
		return refused() == 4 && established() == limit
	})
	d.mustBeRefused("a", urlA)
	d.mustFetch("b", urlA, "A") // the limit is per sandbox
	if n := refused(); n != 4 {
		t.Fatalf("%d connections refused, want 4", n)
	}
	// Closed connections no longer count.
	if res, err := d.client.Exec(ctx, "a", sdk.ExecRequest{Shell: "killall nc"}); err != nil || res.ExitCode != 0 {
		t.Fatalf("killall nc: %+v %v", res, err)
	}
	waitFor(t, 30*time.Second, "a connects again", func() bool { _, ok := d.fetch("a", urlA); return ok })
}

// dialIn opens a connection from inside the network namespace of a running
// sandbox, as code in it would.
func (d *daemon) dialIn(id, network, addr string) net.Conn {
	d.t.Helper()
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		// The thread never leaves the sandbox's namespace: it is locked
		// and dies with this goroutine.
		runtime.LockOSThread()
		f, err := os.Open(filepath.Join(d.dataDir, "network", id, "netns"))
		if err != nil {
			ch <- result{err: err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{err: err}
			return
		}
		c, err := net.Dial(network, addr)
		ch <- result{c, err}
	}()
	r := <-ch
	if r.err != nil {
		d.t.Fatalf("dial %s in %s: %v", addr, id, r.err)
	}
	d.t.Cleanup(func() { r.c.Close() })
	return r.c
}

// TestNetworkDNSFloodPolicyChange: a sandbox floods its DNS server with
// names its allow-list matches, each needing its addresses learned. A
// policy change made while the flood is queued takes effect before the
// flood is answered (it does not wait behind every learned answer), and the
// daemon's log does not get a line per query.
func TestNetworkDNSFloodPolicyChange(t *testing.T) {
	const flood = 2000
	names := newTestDNS(t)
	var next atomic.Uint32
	names.mu.Lock()
	names.any = func(name string) (netip.Addr, bool) {
		if !strings.HasSuffix(name, ".flood.test") {
			return netip.Addr{}, false
		}
		n := next.Add(1)
		return netip.AddrFrom4([4]byte{198, 18, byte(n >> 8), byte(n)}), true
	}
	names.mu.Unlock()
	d := startDaemon(t, "--dns-upstream", names.addr)
	sb := d.create(sdk.CreateSandboxRequest{Name: "flood", Egress: &sdk.EgressPolicy{Mode: sdk.EgressAllowList, Domains: []string{"*.flood.test"}}})
	info, err := d.client.GetNetwork(context.Background(), sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	conn := d.dialIn(sb.ID, "udp4", net.JoinHostPort(info.Gateway, "53"))
	// Room for every answer even when they come in one burst.
	raw, err := conn.(*net.UDPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	raw.Control(func(fd uintptr) { err = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 64<<20) })
	if err != nil {
		t.Fatal(err)
	}

	// Before the policy change every flood name is allowed: a REFUSED
	// answer to one is the new policy at work.
	var answered, refused atomic.Int32
	go func() {
		buf := make([]byte, 1500)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			m := new(dns.Msg)
			if m.Unpack(buf[:n]) != nil || !strings.HasSuffix(m.Question[0].Name, ".flood.test.") {
				continue
			}
			if m.Rcode == dns.RcodeRefused {
				refused.Add(1)
			}
			answered.Add(1)
		}
	}()
	query := func(i int) {
		m := new(dns.Msg)
		m.SetQuestion(fmt.Sprintf("n%d.flood.test.", i), dns.TypeA)
		m.Id = uint16(i)
		b, _ := m.Pack()
		if _, err := conn.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	// Send in steps the daemon's socket buffer holds, until upstream has
	// seen every query: all of them now wait to be learned.
	for sent := 0; sent < flood; {
		for range 100 {
			query(sent)
			sent++
		}
		waitFor(t, 60*time.Second, "upstream sees the flood", func() bool { return names.count() >= sent })
	}
	d.setEgress("flood", sdk.EgressPolicy{Mode: sdk.EgressBlockAll})
	atPut := answered.Load()
	waitFor(t, 120*time.Second, "every flood query answered", func() bool { return answered.Load() == flood })
	t.Logf("answered when the policy change returned: %d of %d; refused: %d", atPut, flood, refused.Load())
	if refused.Load() == 0 {
		t.Fatalf("the policy change waited until the flood was answered (%d of %d answered when it returned)", atPut, flood)
	}
	// A new query is refused at once, without asking upstream.
	before, refusedBefore := names.count(), refused.Load()
	query(flood + 1)
	waitFor(t, 30*time.Second, "the probe answered", func() bool { return answered.Load() == flood+1 })
	if refused.Load() != refusedBefore+1 || names.count() != before {
		t.Fatalf("after block-all a query was not refused, or reached upstream")
	}
	log, _ := os.ReadFile(filepath.Join(d.dataDir, "daemon.log"))
	if n := strings.Count(string(log), "\n"); n > flood/20 {
		t.Fatalf("the daemon logged %d lines for a flood of %d queries:\n%s", n, flood, lastLines(string(log), 20))
	}
}

func TestNetworkIsolation(t *testing.T) {
	out := newOutside(t)
	d := startDaemon(t, "--egress-allow-private", out.subnet.String())
	ctx := context.Background()
	d.create(sdk.CreateSandboxRequest{Name: "a"})
	d.create(sdk.CreateSandboxRequest{Name: "b"})
	quiet := d.create(sdk.CreateSandboxRequest{Name: "quiet", Network: sdk.NetworkNone})
	if quiet.Network != sdk.NetworkNone || quiet.Egress != nil {
		t.Fatalf("network none: %+v", quiet)
	}
	for _, sb := range []string{"a", "b"} {
		res, err := d.client.Exec(ctx, sb, sdk.ExecRequest{Shell: "mkdir -p /www && echo " + sb + " > /www/index.html && busybox httpd -p 8080 -h /www"})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("start httpd in %s: %+v %v", sb, res, err)
		}
	}
	infoB, err := d.client.GetNetwork(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	d.mustFetch("b", "http://"+infoB.Address+":8080/", "b\n")
	d.mustFetch("a", "http://"+out.a.String()+":8080/", "A") // egress works by default
	if got, ok := d.fetch("a", "http://"+infoB.Address+":8080/"); ok {
		t.Fatalf("sandbox a reached sandbox b: %q", got)
	}
	if got, ok := d.fetch("quiet", "http://"+out.a.String()+":8080/"); ok {
		t.Fatalf("a sandbox with network none reached the outside: %q", got)
	}
	// DNS answers on the gateway; other host ports are refused.
	res, _ := d.client.Exec(ctx, "a", sdk.ExecRequest{Shell: "cat /etc/resolv.conf"})
	if !strings.Contains(res.Stdout, "nameserver "+infoB.Gateway) {
		t.Fatalf("resolv.conf: %q", res.Stdout)
	}
	d.mustBeRefused("a", "http://"+infoB.Gateway+":22/")

	// Stop and delete leave nothing behind (the harness checks the rest).
	if _, err := d.client.StopSandbox(ctx, "a", sdk.StopOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	bridge := d.flag("--bridge")
	if out, _ := exec.Command("ip", "-o", "link", "show", "master", bridge).Output(); strings.Count(string(out), "\n") != 1 {
		t.Fatalf("after stopping a, the bridge should have only b's veth:\n%s", out)
	}
	for _, sb := range []string{"a", "b", "quiet"} {
		if err := d.client.DeleteSandbox(ctx, sb, true); err != nil {
			t.Fatal(err)
		}
	}
	d.assertNoNetworkLeaks()
}

// previewSandbox creates a sandbox running the wsecho server on port 8081
// and busybox httpd on 8080, and exposes both.
func previewSandbox(t *testing.T, d *daemon, name string) (httpd, ws *sdk.Port) {
	t.Helper()
	ctx := context.Background()
	bin := filepath.Join(t.TempDir(), "wsecho")
	build := exec.Command("go", "build", "-ldflags=-s -w", "-o", bin, "./testdata/wsecho")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build wsecho: %v\n%s", err, out)
	}
	d.create(sdk.CreateSandboxRequest{Name: name})
	f, err := os.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := d.client.Upload(ctx, name, "/usr/local/bin/wsecho", f, 0o755, sdk.WithParents()); err != nil {
		t.Fatal(err)
	}
	res, err := d.client.Exec(ctx, name, sdk.ExecRequest{Shell: "mkdir -p /www && echo hello > /www/index.html && busybox httpd -p 8080 -h /www && (wsecho </dev/null >/dev/null 2>&1 &)"})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("start servers: %+v %v", res, err)
	}
	if httpd, err = d.client.ExposePort(ctx, name, sdk.ExposePortRequest{Port: 8080}); err != nil {
		t.Fatal(err)
	}
	if ws, err = d.client.ExposePort(ctx, name, sdk.ExposePortRequest{Port: 8081}); err != nil {
		t.Fatal(err)
	}
	return httpd, ws
}

// get sends a GET through the daemon with the given Host and headers.
func (d *daemon) get(url, host string, hdr map[string]string) (int, string, http.Header) {
	d.t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		d.t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func TestPreviews(t *testing.T) {
	d := startDaemon(t, "--preview-domain", "preview.test")
	ctx := context.Background()
	httpd, ws := previewSandbox(t, d, "web")
	sb, _ := d.client.GetSandbox(ctx, "web")
	if httpd.Token == "" || httpd.Public || !strings.HasPrefix(httpd.URL, "http://8080-"+sb.ID+".preview.test") {
		t.Fatalf("exposed port: %+v", httpd)
	}
	base := "http://" + d.addr
	pathURL := base + "/v1/sandboxes/web/ports/8080/"
	hostName := "8080-" + sb.ID + ".preview.test"
	tok := map[string]string{"X-Sbx-Preview-Token": httpd.Token}

	// Path-based and host-based: refused without a credential, served with one.
	waitFor(t, 10*time.Second, "httpd in the sandbox", func() bool {
		status, _, _ := d.get(pathURL, "", tok)
		return status == 200
	})
	for _, c := range []struct {
		name, url, host string
		hdr             map[string]string
		status          int
	}{
		{"path, no credential", pathURL, "", nil, 401},
		{"path, token header", pathURL, "", tok, 200},
		{"path, wrong token", pathURL, "", map[string]string{"X-Sbx-Preview-Token": ws.Token}, 401},
		{"path, API key", pathURL, "", map[string]string{"Authorization": "Bearer " + d.token}, 200},
		{"path, token query", pathURL + "?sbx_token=" + httpd.Token, "", nil, 200},
		{"host, no credential", base + "/", hostName, nil, 401},
		{"host, token header", base + "/", hostName, tok, 200},
		{"host by name, token", base + "/", "8080-web.preview.test", tok, 200},
		{"host, other port's token", base + "/", "8081-" + sb.ID + ".preview.test", tok, 401},
		// Without valid credentials a missing sandbox or port looks like
		// a private one (no enumeration); the API key learns the truth.
		{"host, unexposed port", base + "/", "9999-" + sb.ID + ".preview.test", tok, 401},
		{"host, no such sandbox", base + "/", "8080-nosuch.preview.test", nil, 401},
		{"path, no such sandbox", base + "/v1/sandboxes/nosuch/ports/8080/", "", nil, 401},
		{"path, unexposed port", base + "/v1/sandboxes/web/ports/9999/", "", tok, 401},
		{"path, unexposed port, API key", base + "/v1/sandboxes/web/ports/9999/", "", map[string]string{"Authorization": "Bearer " + d.token}, 404},
	} {
		status, body, _ := d.get(c.url, c.host, c.hdr)
		if status != c.status || (status == 200 && body != "hello\n") {
			t.Errorf("%s: %d %q, want %d", c.name, status, body, c.status)
		}
	}

	// The token in the query sets a cookie, scoped to this sandbox and
	// port, that then suffices.
	_, _, h := d.get(pathURL+"?sbx_token="+httpd.Token, "", nil)
	cookie := h.Get("Set-Cookie")
	if !strings.HasPrefix(cookie, "sbx_preview=") || !strings.Contains(cookie, "HttpOnly") || !strings.Contains(cookie, "Path=/v1/sandboxes/web/ports/8080/") {
		t.Fatalf("Set-Cookie = %q", cookie)
	}
	// Path-based previews share the API's origin: each page is put in a CSP
	// sandbox (an opaque origin). Host-based ones have their own origin.
	if csp := h.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "sandbox ") || strings.Contains(csp, "allow-same-origin") {
		t.Fatalf("path-based preview: Content-Security-Policy = %q", csp)
	}
	if _, _, h := d.get(base+"/", hostName, tok); h.Get("Content-Security-Policy") != "" {
		t.Fatalf("host-based preview got a CSP sandbox: %q", h.Get("Content-Security-Policy"))
	}
	if status, _, _ := d.get(pathURL, "", map[string]string{"Cookie": strings.Split(cookie, ";")[0]}); status != 200 {
		t.Fatalf("with the cookie: %d", status)
	}

	// A signed URL works until it expires; a tampered one does not.
	signed, err := d.client.SignPortURL(ctx, "web", sdk.SignPortRequest{Port: 8080, ExpiresInSeconds: 600})
	if err != nil {
		t.Fatal(err)
	}
	u := strings.Replace(signed.URL, "http://"+hostName, base, 1)
	if status, body, _ := d.get(u, hostName, nil); status != 200 || body != "hello\n" {
		t.Fatalf("signed URL: %d %q", status, body)
	}
	if status, _, _ := d.get(strings.Replace(u, "sbx_sig=", "sbx_sig=0", 1), hostName, nil); status != 401 {
		t.Fatalf("tampered signed URL: %d", status)
	}

	// The sandbox never sees sbx's credentials.
	wsHost := "8081-" + sb.ID + ".preview.test"
	_, headers, _ := d.get(base+"/headers?a=1&sbx_token="+ws.Token, wsHost, map[string]string{"Cookie": "app=1; sbx_preview=x", "Authorization": "Bearer " + d.token})
	for _, secret := range []string{ws.Token, d.token, "sbx_preview", "X-Sbx-Preview-Token"} {
		if strings.Contains(headers, secret) {
			t.Fatalf("the sandbox saw %q:\n%s", secret, headers)
		}
	}
	if !strings.Contains(headers, "Query: a=1") || !strings.Contains(headers, "Cookie: [app=1]") || !strings.Contains(headers, "Host: "+wsHost) {
		t.Fatalf("forwarded request lost its own query, cookies or host:\n%s", headers)
	}

	testStreaming(t, d, base+"/v1/sandboxes/web/ports/8081", ws.Token)
	testWebSocket(t, d, "ws://"+d.addr+"/v1/sandboxes/web/ports/8081/echo", ws.Token)

	// Tokens and proxies survive a daemon crash.
	d.kill9()
	d.start()
	if status, body, _ := d.get(pathURL, "", tok); status != 200 || body != "hello\n" {
		t.Fatalf("after a restart: %d %q", status, body)
	}
	testWebSocket(t, d, "ws://"+d.addr+"/v1/sandboxes/web/ports/8081/echo", ws.Token)

	// Unexposed: the token stops working.
	if err := d.client.UnexposePort(ctx, "web", 8080); err != nil {
		t.Fatal(err)
	}
	// The retired token is no credential: the answer is the one anyone gets.
	if status, _, _ := d.get(pathURL, "", tok); status != 401 {
		t.Fatalf("after unexpose: %d", status)
	}
	stdout, stderr, code := d.sbx("", "port", "ls", "web", "-o", "json")
	var list []sdk.Port
	if err := json.Unmarshal([]byte(stdout), &list); code != 0 || err != nil || len(list) != 1 || list[0].Port != 8081 {
		t.Fatalf("sbx port ls: %d %q %q", code, stdout, stderr)
	}
	// Public ports need nothing.
	if _, err := d.client.ExposePort(ctx, "web", sdk.ExposePortRequest{Port: 8080, Public: true}); err != nil {
		t.Fatal(err)
	}
	if status, _, _ := d.get(pathURL, "", nil); status != 200 {
		t.Fatalf("public port: %d", status)
	}
}

// testStreaming checks that a response is passed on as it is written.
func testStreaming(t *testing.T, d *daemon, base, token string) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/stream", nil)
	req.Header.Set("X-Sbx-Preview-Token", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if line, err := r.ReadString('\n'); err != nil || line != "first\n" {
		t.Fatalf("first line of the stream: %q %v", line, err)
	}
	// The server writes more only after /release: the first line came
	// through while the response was still open.
	if status, body, _ := d.get(base+"/release", "", map[string]string{"X-Sbx-Preview-Token": token}); status != 200 {
		t.Fatalf("release: %d %q", status, body)
	}
	if line, err := r.ReadString('\n'); err != nil || line != "second\n" {
		t.Fatalf("second line of the stream: %q %v", line, err)
	}
}

// testWebSocket sends a few messages through the proxy to the echo server.
func testWebSocket(t *testing.T, d *daemon, url, token string) {
	t.Helper()
	cfg, err := websocket.NewConfig(url, "http://"+d.addr)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Header.Set("X-Sbx-Preview-Token", token)
	conn, err := websocket.DialConfig(cfg)
	if err != nil {
		t.Fatalf("WebSocket through the proxy: %v", err)
	}
	defer conn.Close()
	for _, msg := range []string{"ping", strings.Repeat("x", 100000), "done"} {
		if err := websocket.Message.Send(conn, msg); err != nil {
			t.Fatal(err)
		}
		var got string
		if err := websocket.Message.Receive(conn, &got); err != nil || got != msg {
			t.Fatalf("echo of a %d-byte message: %d bytes, %v", len(msg), len(got), err)
		}
	}
}

// TestPreviewLifecycle: preview requests count as activity; a path-based
// preview GET of a stopped sandbox answers 409 without starting it, and
// after a start the preview serves again.
func TestPreviewLifecycle(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	d.create(sdk.CreateSandboxRequest{Name: "lazy", Entrypoint: []string{"busybox", "httpd", "-f", "-p", "8080", "-h", "/workspace"}})
	if res, err := d.client.Exec(ctx, "lazy", sdk.ExecRequest{Shell: "echo lazy > /workspace/index.html"}); err != nil || res.ExitCode != 0 {
		t.Fatalf("write index.html: %+v %v", res, err)
	}
	p, err := d.client.ExposePort(ctx, "lazy", sdk.ExposePortRequest{Port: 8080})
	if err != nil {
		t.Fatal(err)
	}
	tok := map[string]string{"X-Sbx-Preview-Token": p.Token}
	waitFor(t, 10*time.Second, "the entrypoint's httpd", func() bool {
		status, _, _ := d.get(p.PathURL, "", tok)
		return status == 200
	})
	before, _ := d.client.GetSandbox(ctx, "lazy")
	waitFor(t, 10*time.Second, "activity from a preview request", func() bool {
		d.get(p.PathURL, "", tok)
		after, err := d.client.GetSandbox(ctx, "lazy")
		return err == nil && after.LastActivityAt != nil && before.LastActivityAt != nil && after.LastActivityAt.After(*before.LastActivityAt)
	})

	if _, err := d.client.StopSandbox(ctx, "lazy", sdk.StopOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if status, body, _ := d.get(p.PathURL, "", nil); status != 401 {
		t.Fatalf("no credential, stopped sandbox: %d %q", status, body) // and it did not start
	}
	if sb, _ := d.client.GetSandbox(ctx, "lazy"); sb.State != sdk.StateStopped {
		t.Fatalf("an unauthorised preview request started the sandbox: %s", sb.State)
	}
	// A path-based preview GET reads the running instance only (issue 27:
	// a GET never starts one): 409 naming the state, and it stays stopped.
	if status, body, _ := d.get(p.PathURL, "", tok); status != 409 || !strings.Contains(body, string(sdk.CodeSandboxNotRunning)) {
		t.Fatalf("preview GET of a stopped sandbox: %d %q, want 409 SANDBOX_NOT_RUNNING", status, body)
	}
	if sb, _ := d.client.GetSandbox(ctx, "lazy"); sb.State != sdk.StateStopped {
		t.Fatalf("a preview GET started the sandbox: %s", sb.State)
	}
	if _, err := d.client.StartSandbox(ctx, "lazy"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the preview after a start", func() bool {
		status, body, _ := d.get(p.PathURL, "", tok)
		return status == 200 && body == "lazy\n"
	})
}

// TestAPIConnectionLimits: idle connections cannot exhaust the daemon. One
// client address holds at most --max-api-conns-per-client connections (more
// are closed at once) while others are still served; idle keep-alive
// connections are closed; a request that runs longer than every timeout
// still completes; the daemon's open-files limit is raised at start.
func TestAPIConnectionLimits(t *testing.T) {
	const perClient, opened = 20, 50
	d := startDaemon(t, "--network", "none", "--max-api-conns-per-client", fmt.Sprint(perClient),
		"--http-idle-timeout", "1s", "--http-header-timeout", "1m")
	from := func(ip string) *net.Dialer {
		return &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	}

	// The soft limit is raised to the hard one, and the hard one to
	// fs.nr_open where the daemon may (CAP_SYS_RESOURCE).
	limits, _ := os.ReadFile(fmt.Sprintf("/proc/%d/limits", d.cmd.Process.Pid))
	for _, line := range strings.Split(string(limits), "\n") {
		if f := strings.Fields(line); strings.HasPrefix(line, "Max open files") && (len(f) < 5 || f[3] != f[4]) {
			t.Errorf("the daemon's open-files limit is not raised: %q", line)
		}
	}

	// Silent connections from one address: past the cap they are closed.
	var closed atomic.Int32
	var conns []net.Conn
	for range opened {
		c, err := from("127.0.0.1").Dial("tcp", d.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns = append(conns, c)
		go func() {
			if _, err := c.Read(make([]byte, 1)); err == io.EOF {
				closed.Add(1)
			}
		}()
	}
	waitFor(t, 30*time.Second, "connections over the per-client cap closed", func() bool { return closed.Load() == opened-perClient })
	// Another client is served; this one gets no more.
	get := func(ip string) error {
		c := &http.Client{Transport: &http.Transport{DialContext: from(ip).DialContext}, Timeout: 10 * time.Second}
		resp, err := c.Get("http://" + d.addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != 200 {
				err = fmt.Errorf("status %d", resp.StatusCode)
			}
		}
		return err
	}
	if err := get("127.0.0.2"); err != nil {
		t.Fatalf("another client was not served while one held its cap: %v", err)
	}
	if err := get("127.0.0.1"); err == nil {
		t.Fatal("a client over its cap was served")
	}
	if n := closed.Load(); n != opened-perClient {
		t.Fatalf("%d connections closed, want %d: the held ones must stay until the header timeout", n, opened-perClient)
	}
	for _, c := range conns {
		c.Close()
	}
	waitFor(t, 30*time.Second, "the client served again once it closed its connections", func() bool { return get("127.0.0.1") == nil })

	// An idle keep-alive connection is closed by the daemon.
	c, err := from("127.0.0.3").Dial("tcp", d.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: sbx\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("keep-alive request: %v %v", resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("an idle keep-alive connection was not closed by the daemon: %v", err)
	}

	// A request that outlives every timeout completes.
	d.create(sdk.CreateSandboxRequest{Name: "long"})
	res, err := d.client.Exec(context.Background(), "long", sdk.ExecRequest{Shell: "sleep 3; echo done"})
	if err != nil || strings.TrimSpace(res.Stdout) != "done" {
		t.Fatalf("a long request: %+v %v", res, err)
	}
}

// Two teams each have a sandbox "app" with a public port: a preview URL
// names one of them unambiguously (id, or "app--<team>"); a bare name
// without a key is team default's only, so another team's "app" never takes
// it. A private port's token dies with the key that exposed it.
func TestPreviewNamesAreTeamScoped(t *testing.T) {
	d := startDaemon(t, "--preview-domain", "preview.test")
	ctx := context.Background()
	blue, k := d.teamKey("blue", sdk.Quotas{}, sdk.ScopeSandboxesWrite, sdk.ScopeSandboxesRead, sdk.ScopeExec)
	serve := func(c *sdk.Client, page string) {
		t.Helper()
		sb, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "app"})
		if err != nil {
			t.Fatal(err)
		}
		if res, err := c.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: "mkdir -p /www && echo " + page + " > /www/index.html && busybox httpd -p 8080 -h /www"}); err != nil || res.ExitCode != 0 {
			t.Fatalf("start httpd: %+v %v", res, err)
		}
		if _, err := c.ExposePort(ctx, sb.ID, sdk.ExposePortRequest{Port: 8080, Public: true}); err != nil {
			t.Fatal(err)
		}
	}
	base := "http://" + d.addr
	page := func(url, host string) string {
		status, body, _ := d.get(url, host, nil)
		return fmt.Sprintf("%d %s", status, strings.TrimSpace(body))
	}
	serve(blue, "blue")
	waitFor(t, 10*time.Second, "httpd of blue", func() bool { return page(base+"/v1/sandboxes/app--blue/ports/8080/", "") == "200 blue" })
	if got := page(base+"/v1/sandboxes/app/ports/8080/", ""); got == "200 blue" {
		t.Fatal("a bare name reached team blue's sandbox without a key")
	}
	serve(d.client, "default")
	waitFor(t, 10*time.Second, "httpd of default", func() bool { return page(base+"/v1/sandboxes/app/ports/8080/", "") == "200 default" })
	for url, want := range map[string]string{
		base + "/v1/sandboxes/app--blue/ports/8080/":    "200 blue",
		base + "/v1/sandboxes/app--default/ports/8080/": "200 default",
	} {
		if got := page(url, ""); got != want {
			t.Errorf("%s: %q, want %q", url, got, want)
		}
	}
	for host, want := range map[string]string{"8080-app--blue.preview.test": "200 blue", "8080-app.preview.test": "200 default"} {
		if got := page(base+"/", host); got != want {
			t.Errorf("host %s: %q, want %q", host, got, want)
		}
	}

	// A private port's token opens it until the key that exposed it is revoked.
	priv, err := blue.ExposePort(ctx, "app", sdk.ExposePortRequest{Port: 8081})
	if err != nil {
		t.Fatal(err)
	}
	tok := map[string]string{"X-Sbx-Preview-Token": priv.Token}
	if status, _, _ := d.get(base+"/v1/sandboxes/app--blue/ports/8081/", "", tok); status == 401 {
		t.Fatal("the token of a live key was refused")
	}
	if _, err := d.client.RevokeKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if status, _, _ := d.get(base+"/v1/sandboxes/app--blue/ports/8081/", "", tok); status != 401 {
		t.Fatalf("the token of a revoked key: %d, want 401", status)
	}
}
