package main

import (
	"strconv"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/internal/daemon"
)

// egressHTTPFlags are the flags of sbx serve for the HTTP egress proxy.
type egressHTTPFlags struct {
	port           int
	upstreamCA     string
	maxHeaderBytes int
}

func (f *egressHTTPFlags) register(cmd *cobra.Command) {
	cmd.Flags().IntVar(&f.port, "egress-proxy-port", daemon.DefaultEgressProxyPort,
		"port of the HTTP egress proxy on the bridge's gateway, where the HTTP and HTTPS of sandboxes with an http egress policy are redirected; -1 turns it off (env SBX_EGRESS_PROXY_PORT)")
	cmd.Flags().StringVar(&f.upstreamCA, "egress-upstream-ca", "",
		"PEM file of CAs the egress proxy trusts, besides the host's, for the servers of HTTPS it decrypts (env SBX_EGRESS_UPSTREAM_CA)")
	cmd.Flags().IntVar(&f.maxHeaderBytes, "egress-max-header-bytes", 64<<10,
		"largest request header a sandbox may send through the egress proxy; larger ones get 431 (env SBX_EGRESS_MAX_HEADER_BYTES)")
}

func (f *egressHTTPFlags) apply(cmd *cobra.Command, cfg *daemon.Config) error {
	port, err := intSetting(cmd, "egress-proxy-port", f.port, "SBX_EGRESS_PROXY_PORT")
	if err != nil {
		return err
	}
	if port == 0 || port > 65535 || port < -1 {
		return usagef("--egress-proxy-port must be 1 to 65535, or -1 for off; got %d", port)
	}
	maxHeader, err := intSetting(cmd, "egress-max-header-bytes", f.maxHeaderBytes, "SBX_EGRESS_MAX_HEADER_BYTES")
	if err != nil {
		return err
	}
	if maxHeader < 1024 || maxHeader > 1<<20 {
		return usagef("--egress-max-header-bytes must be 1024 to 1048576; got %d", maxHeader)
	}
	cfg.EgressHTTP = daemon.EgressHTTPConfig{
		Port:           port,
		UpstreamCA:     setting(cmd, "egress-upstream-ca", f.upstreamCA, "SBX_EGRESS_UPSTREAM_CA"),
		MaxHeaderBytes: maxHeader,
	}
	return nil
}

// intSetting is setting for a whole-number flag.
func intSetting(cmd *cobra.Command, flag string, value int, env string) (int, error) {
	s := setting(cmd, flag, strconv.Itoa(value), env)
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, usagef("%s must be a whole number, got %q", env, s)
	}
	return n, nil
}
