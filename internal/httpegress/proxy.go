// Package httpegress is the daemon's transparent HTTP(S) egress proxy.
//
// The firewall (package network) redirects the outbound TCP 80 and 443 of
// every bridge sandbox whose egress policy has an http section to one
// listener on the bridge's gateway. The proxy finds the connection's
// original destination (SO_ORIGINAL_DST) and the sandbox (its source
// address), then:
//
//   - HTTPS: reads the ClientHello's server name. A host that one of the
//     sandbox's rules names is decrypted with a leaf certificate the
//     daemon's CA mints for it (the CA is in every sandbox's trust store),
//     and its requests go through the rules; any other HTTPS is spliced to
//     its destination untouched, logged as one "TLS" entry.
//   - HTTP: every request goes through the rules.
//
// Rules (see wire.HTTPRule) allow, deny, inject headers from secrets,
// rewrite, or forward to an operator's handler. Secrets are added here,
// on the way out: they never enter the sandbox. Every request is logged
// (Log) and counted (Collector).
package httpegress

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sbxhq/sbx/internal/netfloor"
	"github.com/sbxhq/sbx/wire"
)

// Sandbox is what the proxy needs to know of the sandbox behind a source
// address, read again for every request so that rule changes apply at once.
type Sandbox struct {
	ID, Team string
	HTTP     *wire.HTTPEgress // nil: the sandbox's HTTP is no longer proxied
}

// Sandboxes finds sandboxes by address and applies their egress policy
// (package network implements it).
type Sandboxes interface {
	HTTPSandbox(src netip.Addr) (Sandbox, bool)
	// EgressAllows reports whether src's egress policy lets it connect to
	// dst, reached under the name host ("" when unknown): the checks of the
	// firewall, which redirected connections no longer pass through.
	EgressAllows(src, dst netip.Addr, host string) bool
	// DialAllows reports whether the proxy may connect to dst, an address
	// it resolved itself for the name host, on behalf of src.
	DialAllows(src, dst netip.Addr, host string) bool
}

// Secrets opens a team's secrets (package secret implements it).
type Secrets interface {
	Open(ctx context.Context, team, name string) (SecretValue, error)
}

// Defaults of Config.
const (
	DefaultMaxHeaderBytes = 64 << 10
	headerTimeout         = 30 * time.Second
	idleTimeout           = 2 * time.Minute
	dialTimeout           = 10 * time.Second
)

// Config configures a Proxy.
type Config struct {
	CA        *CA
	Sandboxes Sandboxes
	Secrets   Secrets
	Log       *Log
	// HandlerSecret, the daemon's webhook secret, derives the per-team
	// keys that sign requests to forward rules' handlers (webhook.TeamKey);
	// "" sends them unsigned.
	HandlerSecret string
	// UpstreamCAs verify the servers of decrypted HTTPS; nil: the host's.
	UpstreamCAs *x509.CertPool
	// Resolver resolves names the proxy dials itself (rewritten hosts,
	// hosts of inject rules); nil: the host's.
	Resolver       *net.Resolver
	MaxHeaderBytes int // of a request from a sandbox; default DefaultMaxHeaderBytes
	Logger         *slog.Logger
}

// Proxy serves redirected connections. Its zero value is not usable; see New.
type Proxy struct {
	cfg      Config
	requests *prometheus.CounterVec
	handler  *http.Client
	wg       sync.WaitGroup
}

// New returns a proxy; Serve runs it.
func New(cfg Config) *Proxy {
	if cfg.MaxHeaderBytes <= 0 {
		cfg.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.Log == nil {
		cfg.Log = NewLog()
	}
	return &Proxy{
		cfg: cfg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sbx_egress_http_requests_total",
			Help: "Requests (and passed-through TLS connections) of sandboxes seen by the HTTP egress proxy, by action applied.",
		}, []string{"action"}),
		handler: netfloor.Default().Client(0), // a tenant chose the handler's URL
	}
}

// Collector is the proxy's metrics.
func (p *Proxy) Collector() prometheus.Collector { return p.requests }

// Log is the proxy's request log.
func (p *Proxy) Log() *Log { return p.cfg.Log }

// Serve accepts redirected connections on ln until it is closed.
func (p *Proxy) Serve(ln net.Listener) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return err
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.serveConn(c)
		}()
	}
}

func (p *Proxy) record(sandbox string, e wire.EgressLogEntry) {
	p.cfg.Log.Add(sandbox, e)
	p.requests.WithLabelValues(e.Action).Inc()
}

// conn is one redirected connection from a sandbox.
type conn struct {
	p      *Proxy
	src    netip.Addr
	dst    netip.AddrPort // where the sandbox meant to go
	scheme string
	sni    string

	mu    sync.Mutex
	pools map[upstreamKey]*http.Transport // see transportFor
}

func (p *Proxy) serveConn(c net.Conn) {
	defer c.Close()
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return
	}
	dst, err := originalDst(tc)
	if err != nil {
		p.cfg.Logger.Warn("egress proxy: no original destination", "err", err)
		return
	}
	src := netip.MustParseAddrPort(c.RemoteAddr().String()).Addr().Unmap()
	sb, ok := p.cfg.Sandboxes.HTTPSandbox(src)
	if !ok {
		return
	}
	br := bufio.NewReaderSize(c, maxHello+5)
	c.SetReadDeadline(time.Now().Add(headerTimeout))
	first, err := br.Peek(1)
	if err != nil {
		return
	}
	c.SetReadDeadline(time.Time{})
	cn := &conn{p: p, src: src, dst: dst, scheme: "http"}
	in := net.Conn(&bufConn{Conn: c, br: br})
	if first[0] == 0x16 { // a TLS handshake
		cn.scheme = "https"
		cn.sni, err = peekSNI(br)
		if err != nil {
			p.record(sb.ID, wire.EgressLogEntry{Time: time.Now(), Scheme: "https", Method: "TLS", Rule: -1, Action: "error", Error: err.Error()})
			return
		}
		if !p.cfg.Sandboxes.EgressAllows(src, dst.Addr(), cn.sni) {
			p.record(sb.ID, wire.EgressLogEntry{Time: time.Now(), Scheme: "https", Method: "TLS", Host: cn.sni, Rule: -1, Action: "deny", Error: "the egress policy refuses this host"})
			return
		}
		if !namesHost(sb.HTTP, cn.sni) {
			p.splice(sb.ID, in, cn)
			return
		}
		in = tls.Server(in, &tls.Config{
			NextProtos: []string{"http/1.1"},
			GetCertificate: func(h *tls.ClientHelloInfo) (*tls.Certificate, error) {
				return p.cfg.CA.Leaf(strings.ToLower(cn.sni))
			},
		})
	} else if !p.cfg.Sandboxes.EgressAllows(src, dst.Addr(), "") {
		return // as the firewall would: the sandbox may not reach dst at all
	}
	defer cn.closeIdle()
	srv := &http.Server{
		Handler:           http.HandlerFunc(cn.serveHTTP),
		MaxHeaderBytes:    p.cfg.MaxHeaderBytes,
		ReadHeaderTimeout: headerTimeout,
		IdleTimeout:       idleTimeout,
		ErrorLog:          slog.NewLogLogger(p.cfg.Logger.Handler(), slog.LevelDebug),
	}
	ln := newOneConnListener(in)
	srv.Serve(ln)
	ln.wait()
}

// splice passes a TLS connection to its destination untouched.
func (p *Proxy) splice(sandbox string, in net.Conn, cn *conn) {
	start := time.Now()
	e := wire.EgressLogEntry{Time: start, Scheme: "https", Method: "TLS", Host: cn.sni, Rule: -1, Action: "passthrough"}
	out, err := net.DialTimeout("tcp", cn.dst.String(), dialTimeout)
	if err != nil {
		e.Action, e.Error = "error", err.Error()
		p.record(sandbox, e)
		return
	}
	defer out.Close()
	done := make(chan int64, 1)
	go func() {
		io.Copy(out, in)
		out.(*net.TCPConn).CloseWrite()
		done <- 0
	}()
	n, _ := io.Copy(in, out)
	if tc, ok := in.(*bufConn); ok {
		tc.Conn.(*net.TCPConn).CloseWrite()
	}
	<-done
	e.Bytes, e.DurationMs = n, ms(time.Since(start))
	p.record(sandbox, e)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// upstreamKey says which upstream connections a request may share: those
// dialled the same way (to the sandbox's original destination, or to a
// name the proxy resolved itself) for the same scheme and host (the TLS
// name verified), under the same rule. A connection pooled for one
// decision never carries a request of another (an inject must not ride a
// connection the sandbox pointed at its own server).
type upstreamKey struct {
	dialTo       string // the original destination, or "" to dial the URL's host by name
	scheme, host string
	rule         int
}

// maxPools bounds a sandbox connection's upstream pools; past it the idle
// connections of all are closed and the pools start over.
const maxPools = 16

// transportFor is the pool of upstream connections for k.
func (cn *conn) transportFor(k upstreamKey) *http.Transport {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if tr := cn.pools[k]; tr != nil {
		return tr
	}
	if len(cn.pools) >= maxPools {
		cn.closeIdleLocked()
	}
	if cn.pools == nil {
		cn.pools = map[upstreamKey]*http.Transport{}
	}
	tr := cn.p.transport(cn, k.dialTo)
	cn.pools[k] = tr
	return tr
}

// closeIdle closes the idle upstream connections of every pool.
func (cn *conn) closeIdle() {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	cn.closeIdleLocked()
}

func (cn *conn) closeIdleLocked() {
	for _, tr := range cn.pools {
		tr.CloseIdleConnections()
	}
	cn.pools = nil
}

// transport is one pool of upstream connections, all dialled to dialTo
// (the sandbox's original destination, checked when it connected) or, when
// "", to the URL's host resolved by the proxy.
func (p *Proxy) transport(cn *conn, dialTo string) *http.Transport {
	d := &net.Dialer{Timeout: dialTimeout, Resolver: p.cfg.Resolver}
	return &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if dialTo != "" {
				return d.DialContext(ctx, network, dialTo)
			}
			// A name the proxy resolves itself: every address it would
			// connect to must be one the sandbox's policy allows.
			host, _, _ := net.SplitHostPort(addr)
			byName := *d
			byName.Control = func(_, address string, _ syscall.RawConn) error {
				ap, err := netip.ParseAddrPort(address)
				if err != nil || !p.cfg.Sandboxes.DialAllows(cn.src, ap.Addr().Unmap(), host) {
					return fmt.Errorf("the egress policy of this sandbox refuses %s (%s)", host, address)
				}
				return nil
			}
			return byName.DialContext(ctx, network, addr)
		},
		TLSClientConfig:       &tls.Config{RootCAs: p.cfg.UpstreamCAs},
		ForceAttemptHTTP2:     false, // requests keep their HTTP/1.1 semantics (upgrades)
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       idleTimeout,
		TLSHandshakeTimeout:   dialTimeout,
		ResponseHeaderTimeout: 0, // long polls and slow APIs are the sandbox's business
	}
}

// oneConnListener hands out one connection, then blocks until it closes,
// so that http.Server.Serve returns when the connection is done.
type oneConnListener struct {
	c      net.Conn
	once   sync.Once
	closed chan struct{}
	given  atomic.Bool
}

func newOneConnListener(c net.Conn) *oneConnListener {
	l := &oneConnListener{closed: make(chan struct{})}
	l.c = &notifyConn{Conn: c, l: l}
	return l
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	if l.given.CompareAndSwap(false, true) {
		return l.c, nil
	}
	<-l.closed
	return nil, net.ErrClosed
}

func (l *oneConnListener) wait()          { <-l.closed }
func (l *oneConnListener) Close() error   { return nil }
func (l *oneConnListener) Addr() net.Addr { return l.c.LocalAddr() }

type notifyConn struct {
	net.Conn
	l *oneConnListener
}

func (c *notifyConn) Close() error {
	err := c.Conn.Close()
	c.l.once.Do(func() { close(c.l.closed) })
	return err
}

// upstreamProxy passes a request on, streaming both ways; upgrades
// (WebSocket) are spliced by httputil.ReverseProxy.
func (cn *conn) upstreamProxy(tr *http.Transport, onErr func(error)) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite:       func(*httputil.ProxyRequest) {}, // the outbound request is ready
		Transport:     tr,
		FlushInterval: -1,
		ErrorLog:      nil,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			onErr(err)
			http.Error(w, fmt.Sprintf("sbx egress: %s: %v", r.URL.Host, err), http.StatusBadGateway)
		},
	}
}
