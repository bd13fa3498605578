// Package mtls is mutual TLS between sbx's parts in a cluster: a server
// that serves only clients whose certificate a given CA signed and that
// carry one of a few names (a host's API serves only the gateway, its
// kubelet API only kube-apiserver), and a client that presents its
// certificate and checks the server's against the same CA.
package mtls

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Pool reads the PEM CA certificates of file; flag names it in errors.
func Pool(file, flag string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", flag, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s %s holds no PEM certificate", flag, file)
	}
	return pool, nil
}

// RequireClient makes cfg refuse, in the handshake, every client without
// a certificate ca signed that names (subject CN or a DNS SAN) one of
// names. what names the server in the refusal.
func RequireClient(cfg *tls.Config, ca *x509.CertPool, names []string, what string) {
	cfg.ClientCAs = ca
	cfg.ClientAuth = tls.RequireAndVerifyClientCert
	cfg.VerifyConnection = func(cs tls.ConnectionState) error { return CheckName(cs, names, what) }
}

// CheckName accepts a verified client certificate whose subject CN or a
// DNS SAN is one of names.
func CheckName(cs tls.ConnectionState, names []string, what string) error {
	if len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
		return fmt.Errorf("%s: no verified client certificate", what)
	}
	leaf := cs.VerifiedChains[0][0]
	for _, n := range append([]string{leaf.Subject.CommonName}, leaf.DNSNames...) {
		if slices.Contains(names, n) {
			return nil
		}
	}
	return fmt.Errorf("%s: client certificate %q is not one it serves (want one of %s)", what, leaf.Subject.CommonName, strings.Join(names, ", "))
}

// Client is the TLS configuration of a client that presents the
// certificate of certFile/keyFile and accepts a server whose certificate
// caFile's CA signed for serverName (whatever address it was reached at:
// hosts share one name, see docs/kubernetes/deploy.md).
func Client(caFile, certFile, keyFile, serverName string) (*tls.Config, error) {
	if caFile == "" || certFile == "" || keyFile == "" {
		return nil, errors.New("mutual TLS needs a CA, a certificate and its key")
	}
	pool, err := Pool(caFile, "the CA file")
	if err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("client certificate: %w", err)
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool, Certificates: []tls.Certificate{cert}, ServerName: serverName}, nil
}
