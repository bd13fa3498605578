package daemon

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/netip"

	"github.com/sbxhq/sbx/internal/mtls"
)

// withTLS wraps the API's listener in TLS when cfg names a certificate. It
// goes outside the connection caps (limitConns), so a client is counted
// from its TCP connection on, handshake included; the server's header
// timeout also bounds the handshake.
//
// Only HTTP/1.1 is offered, as over plain http: the connection caps count
// connections, and PTY attach and previews upgrade to WebSockets by
// hijacking theirs.
func withTLS(ln net.Listener, cfg Config) (net.Listener, error) {
	if cfg.TLSCert == "" {
		warnPlaintext(ln.Addr())
		return ln, nil
	}
	cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("load --tls-cert %s and --tls-key %s: %w", cfg.TLSCert, cfg.TLSKey, err)
	}
	tc := &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
		NextProtos:   []string{"http/1.1"},
	}
	if cfg.TLSClientCA != "" {
		// The handshake refuses every other client: nothing of the API,
		// not even an unauthenticated route, answers it.
		pool, err := mtls.Pool(cfg.TLSClientCA, "--tls-client-ca")
		if err != nil {
			return nil, err
		}
		mtls.RequireClient(tc, pool, cfg.TLSClientNames, "sbx API (--tls-client-name)")
	}
	return tls.NewListener(ln, tc), nil
}

// warnPlaintext warns when the API is reachable from other hosts without
// TLS: API keys and preview tokens would cross the network in clear text.
func warnPlaintext(addr net.Addr) {
	ap, err := netip.ParseAddrPort(addr.String())
	if err == nil && ap.Addr().IsLoopback() {
		return
	}
	slog.Warn("the API listens on a non-loopback address without TLS: API keys and preview tokens cross the network in clear text; serve https with --tls-cert and --tls-key, or listen on 127.0.0.1 behind a TLS proxy", "listen", addr.String())
}
