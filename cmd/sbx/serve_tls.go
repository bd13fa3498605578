package main

import (
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/internal/daemon"
)

// DefaultGatewayClientName is the name the gateway's client certificate
// carries (deploy/kubernetes, docs/kubernetes/deploy.md).
const DefaultGatewayClientName = "sbx-gateway"

// tlsFlags are the flags of sbx serve that turn on https.
type tlsFlags struct {
	cert, key, clientCA string
	clientNames         []string
}

func (f *tlsFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.cert, "tls-cert", "", "PEM certificate (chain) to serve the API and previews over https; needs --tls-key (env SBX_TLS_CERT)")
	cmd.Flags().StringVar(&f.key, "tls-key", "", "PEM private key of --tls-cert (env SBX_TLS_KEY)")
	cmd.Flags().StringVar(&f.clientCA, "tls-client-ca", "", "PEM CA: serve only clients presenting a certificate it signed that names one of --tls-client-name (mutual TLS; a cluster host serves only the gateway: docs/kubernetes/deploy.md) (env SBX_TLS_CLIENT_CA)")
	cmd.Flags().StringArrayVar(&f.clientNames, "tls-client-name", nil, "name (subject CN or DNS SAN) a client certificate must carry with --tls-client-ca; repeat for several (env SBX_TLS_CLIENT_NAMES, comma-separated; default: sbx-gateway)")
}

func (f *tlsFlags) apply(cmd *cobra.Command, cfg *daemon.Config) error {
	cfg.TLSCert = setting(cmd, "tls-cert", f.cert, "SBX_TLS_CERT")
	cfg.TLSKey = setting(cmd, "tls-key", f.key, "SBX_TLS_KEY")
	if (cfg.TLSCert == "") != (cfg.TLSKey == "") {
		return usagef("--tls-cert and --tls-key go together: give both or neither")
	}
	cfg.TLSClientCA = setting(cmd, "tls-client-ca", f.clientCA, "SBX_TLS_CLIENT_CA")
	cfg.TLSClientNames = f.clientNames
	if v := os.Getenv("SBX_TLS_CLIENT_NAMES"); v != "" && !cmd.Flags().Changed("tls-client-name") {
		cfg.TLSClientNames = strings.Split(v, ",")
	}
	switch {
	case cfg.TLSClientCA == "" && len(cfg.TLSClientNames) > 0:
		return usagef("--tls-client-name needs --tls-client-ca: the CA that signed those clients' certificates")
	case cfg.TLSClientCA != "" && cfg.TLSCert == "":
		return usagef("--tls-client-ca needs --tls-cert and --tls-key: client certificates are checked over https")
	case cfg.TLSClientCA != "" && len(cfg.TLSClientNames) == 0:
		cfg.TLSClientNames = []string{DefaultGatewayClientName}
	}
	return nil
}
