package main

import (
	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/internal/daemon"
)

// tlsFlags are the flags of sbx serve that turn on https.
type tlsFlags struct {
	cert, key string
}

func (f *tlsFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.cert, "tls-cert", "", "PEM certificate (chain) to serve the API and previews over https; needs --tls-key (env SBX_TLS_CERT)")
	cmd.Flags().StringVar(&f.key, "tls-key", "", "PEM private key of --tls-cert (env SBX_TLS_KEY)")
}

func (f *tlsFlags) apply(cmd *cobra.Command, cfg *daemon.Config) error {
	cfg.TLSCert = setting(cmd, "tls-cert", f.cert, "SBX_TLS_CERT")
	cfg.TLSKey = setting(cmd, "tls-key", f.key, "SBX_TLS_KEY")
	if (cfg.TLSCert == "") != (cfg.TLSKey == "") {
		return usagef("--tls-cert and --tls-key go together: give both or neither")
	}
	return nil
}
