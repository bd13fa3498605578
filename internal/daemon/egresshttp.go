package daemon

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sbxhq/sbx/internal/api"
	"github.com/sbxhq/sbx/internal/httpegress"
	"github.com/sbxhq/sbx/internal/network"
	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/internal/secret"
	"github.com/sbxhq/sbx/internal/store"
)

// DefaultEgressProxyPort is the HTTP egress proxy's port on the gateway.
const DefaultEgressProxyPort = 3129

// EgressHTTPConfig configures the HTTP egress proxy (package httpegress).
type EgressHTTPConfig struct {
	// Port on the bridge's gateway; 0 for DefaultEgressProxyPort, <0 turns
	// the proxy off (then http sections of egress policies take no effect).
	Port int
	// UpstreamCA, a PEM file, adds CAs the proxy trusts for the servers of
	// HTTPS it decrypts (besides the host's).
	UpstreamCA string
	// MaxHeaderBytes of a sandbox's request; 0 for the default (64 KiB).
	MaxHeaderBytes int
}

// egressProxyPort is the port the firewall redirects to; 0 when off.
func egressProxyPort(cfg Config) int {
	switch p := cfg.EgressHTTP.Port; {
	case cfg.NoNetwork || p < 0:
		return 0
	case p == 0:
		return DefaultEgressProxyPort
	default:
		return p
	}
}

// egressHTTP is the running proxy and what the API serves of it.
type egressHTTP struct {
	proxy   *httpegress.Proxy
	secrets *secret.Keeper
	ln      net.Listener
}

// startEgressHTTP opens the secrets, loads the egress CA (adding it to
// every sandbox's trust store through defaults' CA bundle) and starts the
// proxy on the gateway. Without networking it returns nil.
func startEgressHTTP(cfg Config, st *store.SQLite, nw *network.Manager, defaults *sandbox.Defaults) (*egressHTTP, error) {
	port := egressProxyPort(cfg)
	if nw == nil || port == 0 {
		return nil, nil
	}
	keeper, err := secret.Open(cfg.DataDir, st)
	if err != nil {
		return nil, err
	}
	ca, err := httpegress.LoadCA(filepath.Join(cfg.DataDir, "egress-ca"))
	if err != nil {
		return nil, err
	}
	if err := trustEgressCA(cfg.DataDir, ca, defaults); err != nil {
		return nil, fmt.Errorf("add the egress CA to the sandboxes' trust store: %w", err)
	}
	var roots *x509.CertPool
	if cfg.EgressHTTP.UpstreamCA != "" {
		if roots, err = x509.SystemCertPool(); err != nil {
			roots = x509.NewCertPool()
		}
		pem, err := os.ReadFile(cfg.EgressHTTP.UpstreamCA)
		if err != nil {
			return nil, fmt.Errorf("egress upstream CA: %w", err)
		}
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("egress upstream CA %s: no PEM certificate in it", cfg.EgressHTTP.UpstreamCA)
		}
	}
	p := httpegress.New(httpegress.Config{
		CA: ca, Sandboxes: nw, Secrets: keeper, HandlerSecret: cfg.WebhookSecret,
		UpstreamCAs: roots, Resolver: upstreamResolver(nw.DNSUpstreams()),
		MaxHeaderBytes: cfg.EgressHTTP.MaxHeaderBytes,
	})
	ln, err := net.Listen("tcp4", net.JoinHostPort(nw.Gateway().String(), strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("HTTP egress proxy on %s port %d (pick another with --egress-proxy-port): %w", nw.Gateway(), port, err)
	}
	go func() {
		if err := p.Serve(ln); err != nil {
			slog.Error("HTTP egress proxy stopped", "err", err)
		}
	}()
	return &egressHTTP{proxy: p, secrets: keeper, ln: ln}, nil
}

// api is what the API serves: secrets and request logs.
func (e *egressHTTP) api() api.EgressHTTP {
	if e == nil {
		return api.EgressHTTP{}
	}
	return api.EgressHTTP{Secrets: e.secrets, Log: e.proxy.Log()}
}

func (e *egressHTTP) Close() {
	if e != nil {
		e.ln.Close()
	}
}

// trustEgressCA writes the operator's CA bundle (or the host's public CAs)
// plus the egress CA to <dataDir>/egress-ca/ca-certificates.crt, which
// instances with HTTP egress rules mount (sandbox.Defaults).
func trustEgressCA(dataDir string, ca *httpegress.CA, defaults *sandbox.Defaults) error {
	base := defaults.CABundle
	if base == "" {
		base = hostCABundle
	}
	bundle, err := os.ReadFile(base)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if len(bundle) > 0 && bundle[len(bundle)-1] != '\n' {
		bundle = append(bundle, '\n')
	}
	bundle = append(bundle, ca.PEM...)
	path := filepath.Join(dataDir, "egress-ca", "ca-certificates.crt")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, bundle, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	defaults.HTTPEgressCABundle = path
	return nil
}

// upstreamResolver asks the sandboxes' DNS upstreams, so that names the
// proxy dials resolve as they do for the sandboxes.
func upstreamResolver(upstreams []string) *net.Resolver {
	if len(upstreams) == 0 {
		return net.DefaultResolver
	}
	var d net.Dialer
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, upstreams[0])
	}}
}

// registerMetrics adds the proxy's counters to the daemon's metrics.
func (e *egressHTTP) registerMetrics(m interface{ Register(...prometheus.Collector) }) {
	if e != nil {
		m.Register(e.proxy.Collector())
	}
}
