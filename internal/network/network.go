package network

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/miekg/dns"
	"github.com/vishvananda/netlink"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/netfloor"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Defaults of Config.
const (
	DefaultBridge = "sbx0"
	DefaultSubnet = "10.88.0.0/16"
	// DefaultConnLimit leaves room for dozens of busy sandboxes in a host
	// conntrack table of the usual 65536 to 262144 entries.
	DefaultConnLimit = 4096
)

// Config configures a Manager.
type Config struct {
	DataDir string // per-sandbox files and pinned namespaces go under DataDir/network/<id>
	Bridge  string // bridge and nftables table name; default DefaultBridge
	Subnet  string // IPv4 subnet of the sandboxes; default DefaultSubnet
	// DNSUpstreams are the resolvers ("host:port") the DNS server asks;
	// default: the nameservers of the host's /etc/resolv.conf.
	DNSUpstreams []string
	// ConnLimit caps the connections one sandbox has tracked by the host
	// at once (outgoing and to the gateway); 0 is DefaultConnLimit, a
	// negative value is no limit.
	ConnLimit int
	// HTTPProxyPort is the port of the HTTP egress proxy on the gateway
	// (package httpegress); 0 turns the redirect off (httpredirect.go).
	HTTPProxyPort int
	// Floor is what no sandbox may reach (package netfloor); nil is
	// netfloor.Default().
	Floor  *netfloor.Floor
	Store  store.NetworkStore
	Logger *slog.Logger
}

// Manager wires sandboxes into the bridge network and enforces their egress
// policies. It is safe for concurrent use; calls for one sandbox are
// serialised by the sandbox Manager.
type Manager struct {
	cfg       Config
	log       *slog.Logger
	subnet    netip.Prefix
	gw        netip.Addr
	bridge    netlink.Link
	fw        *firewall
	ipam      *ipam
	dns       *dnsServer
	transport *http.Transport // to sandbox ports, for the preview proxy
	lock      net.Listener    // one daemon per bridge

	mu      sync.Mutex
	members map[string]*member     // running bridge sandboxes by id
	byAddr  map[netip.Addr]*member // the same, by address

	logMu   sync.Mutex
	logSeen map[string]logState // rate-limited log lines (learn.go)
}

// member is the network state of one running bridge sandbox.
type member struct {
	id   string
	ip   netip.Addr
	team string // for the egress proxy's secrets

	learn *learner // its DNS answers waiting to be learned (learn.go)

	mu      sync.Mutex // held while its policy or DNS set changes
	egress  *store.Egress
	policy  *policy
	learned map[string][]learnedAddr // name → addresses the DNS server answered
}

func newMember(id string, ip netip.Addr, e *store.Egress) *member {
	return &member{id: id, ip: ip, learn: newLearner(), egress: e, policy: compile(e), learned: map[string][]learnedAddr{}}
}

var bridgeNameRe = regexp.MustCompile(`^[a-z][a-z0-9_]{0,14}$`)

// New sets up the bridge, the firewall table and the DNS server. What it
// sets up in the kernel stays when the daemon exits, so running sandboxes
// keep their network.
func New(ctx context.Context, cfg Config) (*Manager, error) {
	if cfg.Bridge == "" {
		cfg.Bridge = DefaultBridge
	}
	if cfg.Subnet == "" {
		cfg.Subnet = DefaultSubnet
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Floor == nil {
		cfg.Floor = netfloor.Default()
	}
	switch {
	case cfg.ConnLimit == 0:
		cfg.ConnLimit = DefaultConnLimit
	case cfg.ConnLimit < 0:
		cfg.ConnLimit = 0
	}
	if !bridgeNameRe.MatchString(cfg.Bridge) {
		return nil, errdefs.Invalid(wire.CodeInvalidBridge, "bridge name %q: use 1 to 15 characters of a-z, 0-9 and '_', starting with a letter", cfg.Bridge)
	}
	subnet, err := netip.ParsePrefix(cfg.Subnet)
	if err != nil || !subnet.Addr().Is4() || subnet.Bits() < 8 || subnet.Bits() > 28 {
		return nil, errdefs.Invalid(wire.CodeInvalidSubnet, "subnet %q: give an IPv4 prefix from /8 to /28, such as %s", cfg.Subnet, DefaultSubnet)
	}
	subnet = subnet.Masked()
	if cfg.DNSUpstreams == nil {
		cfg.DNSUpstreams = systemUpstreams()
	}
	m := &Manager{
		cfg: cfg, log: cfg.Logger, subnet: subnet, gw: subnet.Addr().Next(),
		ipam:    newIPAM(cfg.Store, subnet),
		members: map[string]*member{}, byAddr: map[netip.Addr]*member{},
		logSeen: map[string]logState{},
	}
	if m.lock, err = lockBridge(cfg.Bridge); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			m.lock.Close()
		}
	}()
	if err := m.checkLeases(ctx); err != nil {
		return nil, err
	}
	if m.fw, err = newFirewall(cfg.Bridge, m.gw, subnet, cfg.ConnLimit); err != nil {
		return nil, err
	}
	m.fw.httpPort, m.fw.floor = cfg.HTTPProxyPort, cfg.Floor
	if m.bridge, err = ensureBridge(cfg.Bridge, netip.PrefixFrom(m.gw, subnet.Bits())); err != nil {
		return nil, err
	}
	if err := m.fw.ensureBase(ctx); err != nil {
		return nil, errdefs.Internal(err, "set up the firewall table inet %s", cfg.Bridge)
	}
	if m.dns, err = startDNS(net.JoinHostPort(m.gw.String(), "53"), dns.HandlerFunc(m.serveDNS)); err != nil {
		return nil, errdefs.Internal(err, "start the sandbox DNS server on %s", m.gw)
	}
	m.transport = newTransport(m)
	ok = true
	return m, nil
}

// lockBridge makes sure one daemon at a time uses a bridge: two would remove
// each other's sandboxes' veths and rules as strays. The lock is an abstract
// unix socket: it goes with the process and leaves no file.
func lockBridge(bridge string) (net.Listener, error) {
	ln, err := net.Listen("unix", "@sbx-bridge-"+bridge)
	if err != nil {
		return nil, errdefs.Conflict(wire.CodeBridgeInUse, "another sbx daemon uses bridge %s; give this one its own --bridge and --subnet", bridge)
	}
	return ln, nil
}

// checkLeases refuses a subnet that running sandboxes are not in.
func (m *Manager) checkLeases(ctx context.Context) error {
	leases, err := m.cfg.Store.ListLeases(ctx)
	if err != nil {
		return err
	}
	for _, l := range leases {
		if a, err := netip.ParseAddr(l.IP); err != nil || !m.subnet.Contains(a) {
			return errdefs.Conflict(wire.CodeSubnetChanged, "sandbox %s holds address %s outside the subnet %s; stop its sandboxes with the old --subnet first", l.SandboxID, l.IP, m.subnet)
		}
	}
	return nil
}

// Close stops the DNS server and drops idle proxy connections. The bridge,
// rules and sandbox namespaces stay.
func (m *Manager) Close() {
	m.dns.close()
	m.transport.CloseIdleConnections()
	m.lock.Close()
}

// Gateway is the bridge's address: the sandboxes' default route and DNS server.
func (m *Manager) Gateway() netip.Addr { return m.gw }

// Subnet is the sandboxes' subnet.
func (m *Manager) Subnet() netip.Prefix { return m.subnet }

// Resolve checks a create request's network settings and returns the mode
// and policy to store.
func (m *Manager) Resolve(mode string, egress *wire.EgressPolicy) (string, *store.Egress, error) {
	return Resolve(mode, egress)
}

// Resolve is Manager.Resolve for a daemon with bridge networking.
func Resolve(mode string, egress *wire.EgressPolicy) (string, *store.Egress, error) {
	switch mode {
	case "", ModeBridge:
		e, err := ParseEgress(egress)
		return ModeBridge, e, err
	case ModeNone:
		if egress != nil {
			return "", nil, errdefs.Invalid(wire.CodeInvalidEgress, "a sandbox with network none has no egress; leave egress out or use network bridge")
		}
		return ModeNone, nil, nil
	}
	return "", nil, errdefs.Invalid(wire.CodeInvalidNetwork, "unknown network mode %q: use bridge or none", mode)
}

func (m *Manager) dir(id string) string       { return filepath.Join(m.cfg.DataDir, "network", id) }
func (m *Manager) netnsPath(id string) string { return filepath.Join(m.dir(id), "netns") }

// Setup gives the next instance of sb its network: in bridge mode a pinned
// namespace with a veth on the bridge, an address, its egress rules and a
// resolv.conf naming the gateway. It fills in inst.NetNSPath and
// inst.ResolvConf. In mode none it does nothing (the runtime makes a fresh
// namespace with loopback only). On error nothing of it is left.
func (m *Manager) Setup(ctx context.Context, sb *store.Sandbox, inst *runtime.Instance) (err error) {
	if sb.Spec.Network != ModeBridge {
		return nil
	}
	id := sb.ID
	// Remnants of an instance that crashed with the daemon down.
	if err := m.Teardown(ctx, id); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			if terr := m.Teardown(context.WithoutCancel(ctx), id); terr != nil {
				m.log.Error("undo network setup", "id", id, "err", terr)
			}
		}
	}()
	ip, err := m.ipam.acquire(ctx, id)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(m.dir(id), 0o700); err != nil {
		return errdefs.Internal(err, "create network directory of %s", id)
	}
	ns := m.netnsPath(id)
	// Class gvisor runs in the host's user namespace (runsc makes its own
	// sandboxing); class container in one of its own (issue 13.4).
	if err := createNetns(ns, sb.Spec.Class != "gvisor"); err != nil {
		return errdefs.Internal(err, "create network namespace of %s", id)
	}
	if err := attachVeth(id, ns, m.bridge, netip.PrefixFrom(ip, m.subnet.Bits()), m.gw); err != nil {
		return errdefs.Internal(err, "connect %s to bridge %s", id, m.cfg.Bridge)
	}
	mem := newMember(id, ip, sb.Spec.Egress)
	mem.team = sb.Team
	if err := m.fw.applySandbox(ctx, id, ip, rulesOf(sb.Spec.Egress), []learnedAddr{}); err != nil {
		return errdefs.Internal(err, "install egress rules of %s", id)
	}
	// The file is in a directory the sandbox cannot see; the runtime
	// bind-mounts it at /etc/resolv.conf.
	resolv := filepath.Join(m.dir(id), "resolv.conf")
	if err := os.WriteFile(resolv, []byte("nameserver "+m.gw.String()+"\noptions ndots:0\n"), 0o644); err != nil {
		return errdefs.Internal(err, "write resolv.conf of %s", id)
	}
	m.register(mem)
	inst.NetNSPath, inst.ResolvConf = ns, resolv
	return nil
}

// Restore takes back a bridge sandbox whose instance kept running while the
// daemon was down: its rules are re-installed (addresses it learned through
// DNS are kept) and its DNS queries are answered again.
func (m *Manager) Restore(ctx context.Context, sb *store.Sandbox) error {
	if sb.Spec.Network != ModeBridge {
		return nil
	}
	l, err := m.cfg.Store.GetLease(ctx, sb.ID)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(l.IP)
	if err != nil {
		return errdefs.Internal(err, "stored address of %s", sb.ID)
	}
	if !isNetns(m.netnsPath(sb.ID)) {
		return errdefs.Internal(nil, "the network namespace of %s is gone", sb.ID)
	}
	if err := reattachVeth(sb.ID, m.bridge); err != nil {
		return errdefs.Internal(err, "reattach %s to bridge %s", sb.ID, m.cfg.Bridge)
	}
	if err := m.fw.applySandbox(ctx, sb.ID, ip, rulesOf(sb.Spec.Egress), nil); err != nil {
		return errdefs.Internal(err, "install egress rules of %s", sb.ID)
	}
	mem := newMember(sb.ID, ip, sb.Spec.Egress)
	mem.team = sb.Team
	m.register(mem)
	return nil
}

// SetEgress applies sb.Spec.Egress to the running sandbox sb at once. The
// addresses it learned for names the new policy still lists stay learned.
// A sandbox that is not running gets the policy when it starts.
func (m *Manager) SetEgress(ctx context.Context, sb *store.Sandbox) error {
	m.mu.Lock()
	mem := m.members[sb.ID]
	m.mu.Unlock()
	if mem == nil {
		return nil
	}
	mem.mu.Lock()
	defer mem.mu.Unlock()
	pol := compile(sb.Spec.Egress)
	keep := map[string][]learnedAddr{}
	var addrs []learnedAddr
	for name, as := range mem.learned {
		if pol.matches(name) {
			keep[name] = as
			addrs = append(addrs, as...)
		}
	}
	if addrs == nil {
		addrs = []learnedAddr{}
	}
	if err := m.fw.applySandbox(ctx, sb.ID, mem.ip, rulesOf(sb.Spec.Egress), addrs); err != nil {
		return errdefs.Internal(err, "apply egress policy of %s", sb.ID)
	}
	mem.egress, mem.policy, mem.learned = sb.Spec.Egress, pol, keep
	return nil
}

// Teardown removes everything Setup made for sandbox id: rules, veth,
// namespace, files and lease. It is idempotent and safe after a partial
// Setup or a crash.
func (m *Manager) Teardown(ctx context.Context, id string) error {
	m.mu.Lock()
	mem := m.members[id]
	if mem != nil {
		delete(m.byAddr, mem.ip)
		delete(m.members, id)
		mem.learn.stop()
	}
	m.mu.Unlock()
	// Setup takes the lease first and Teardown gives it back last, so with
	// no lease and no directory there is nothing to undo (strays of a
	// deleted record are Prune's). This keeps a start-up over many stopped
	// sandboxes from running nft for each.
	if mem == nil {
		_, err := m.cfg.Store.GetLease(ctx, id)
		if _, serr := os.Stat(m.dir(id)); errdefs.Is(err, errdefs.KindNotFound) && errors.Is(serr, os.ErrNotExist) {
			return nil
		}
	}
	var errs []error
	if err := m.fw.removeSandbox(ctx, id); err != nil {
		errs = append(errs, fmt.Errorf("remove rules: %w", err))
	}
	if err := removeVeth(id); err != nil {
		errs = append(errs, fmt.Errorf("remove veth: %w", err))
	}
	if err := removeNetns(m.netnsPath(id)); err != nil {
		errs = append(errs, fmt.Errorf("remove namespace: %w", err))
	} else if err := os.RemoveAll(m.dir(id)); err != nil {
		errs = append(errs, err)
	}
	if l, err := m.cfg.Store.GetLease(ctx, id); err == nil {
		if ip, err := netip.ParseAddr(l.IP); err == nil {
			if err := forgetConns(ip); err != nil {
				errs = append(errs, fmt.Errorf("forget connections: %w", err))
			}
		}
	}
	if err := m.ipam.release(ctx, id); err != nil {
		errs = append(errs, fmt.Errorf("release address: %w", err))
	}
	// Idle proxy connections may point at the address just released.
	m.transport.CloseIdleConnections()
	if err := errors.Join(errs...); err != nil {
		return errdefs.Internal(err, "tear down the network of %s", id)
	}
	return nil
}

// Prune removes network state that belongs to no sandbox in keep (the
// running bridge sandboxes): namespaces, leases, veths and rules left by
// sandboxes that are gone. The daemon calls it after reconciling.
func (m *Manager) Prune(ctx context.Context, keep map[string]bool) error {
	keep = maps.Clone(keep)
	m.mu.Lock()
	for id := range m.members { // set up or restored by this daemon: live
		keep[id] = true
	}
	m.mu.Unlock()
	ids := map[string]bool{}
	entries, _ := os.ReadDir(filepath.Join(m.cfg.DataDir, "network"))
	for _, e := range entries {
		ids[e.Name()] = true
	}
	leases, err := m.cfg.Store.ListLeases(ctx)
	if err != nil {
		return err
	}
	for _, l := range leases {
		ids[l.SandboxID] = true
	}
	var errs []error
	for id := range ids {
		if !keep[id] {
			m.log.Warn("removing network state of a sandbox that is not running", "id", id)
			errs = append(errs, m.Teardown(ctx, id))
		}
	}
	veths, chains := map[string]bool{}, map[string]bool{}
	for id := range keep {
		veths[vethName(id)], chains[chainName(id)] = true, true
	}
	ports, err := bridgePorts(m.bridge)
	errs = append(errs, err)
	for _, name := range ports {
		if !veths[name] {
			m.log.Warn("removing a veth no sandbox owns", "veth", name)
			errs = append(errs, removeLink(name))
		}
	}
	names, err := m.fw.sandboxChains(ctx)
	errs = append(errs, err)
	for _, c := range names {
		if !chains[c] {
			m.log.Warn("removing an egress chain no sandbox owns", "chain", c)
			errs = append(errs, m.fw.removeChainByName(ctx, c))
		}
	}
	return errors.Join(errs...)
}

// Destroy removes the bridge and the firewall table. Sandboxes must be
// stopped first; it is for tests and for uninstalling.
func (m *Manager) Destroy(ctx context.Context) error {
	return errors.Join(m.fw.destroy(ctx), removeBridge(m.cfg.Bridge))
}

// Address returns the address of a running bridge sandbox.
func (m *Manager) Address(id string) (netip.Addr, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if mem := m.members[id]; mem != nil {
		return mem.ip, true
	}
	return netip.Addr{}, false
}

func (m *Manager) register(mem *member) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old := m.members[mem.id]; old != nil {
		old.learn.stop()
	}
	m.members[mem.id] = mem
	m.byAddr[mem.ip] = mem
	go m.learnLoop(mem)
}

func (m *Manager) memberAt(ip netip.Addr) *member {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.byAddr[ip]
}

// rulesOf is what the firewall needs of a stored policy.
func rulesOf(e *store.Egress) *policyRules {
	if e == nil {
		return &policyRules{mode: AllowAll}
	}
	return &policyRules{mode: e.Mode, cidrs: e.CIDRs, dnsOnlyViaGateway: compile(e).hasDomains(), http: e.HTTP != nil}
}

// maxLearnedNames bounds the names remembered per sandbox.
const maxLearnedNames = 4096

// remember records addresses learned for name, dropping expired records.
func (mem *member) remember(name string, ips []netip.Addr, ttl time.Duration) {
	now := time.Now()
	if len(mem.learned) >= maxLearnedNames {
		for n, as := range mem.learned {
			if len(as) == 0 || as[0].expires.Before(now) {
				delete(mem.learned, n)
			}
		}
	}
	var as []learnedAddr
	for _, ip := range ips {
		as = append(as, learnedAddr{ip: ip, expires: now.Add(ttl)})
	}
	mem.learned[name] = as
}
