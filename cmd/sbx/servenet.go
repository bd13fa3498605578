package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/internal/daemon"
	"github.com/sbxhq/sbx/internal/netfloor"
	"github.com/sbxhq/sbx/internal/network"
)

// netFlags are the networking flags of `sbx serve`.
type netFlags struct {
	network, bridge, subnet, previewDomain string
	dnsUpstreams                           []string
	floorAllow, floorDeny                  []string
	previewActivity                        bool
	connLimit                              int
	http                                   daemon.HTTPLimits
}

func (f *netFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.network, "network", "bridge", `sandbox networking: "bridge" (own namespace, NAT, DNS, egress policies, previews) or "none" (loopback only)`)
	fl.StringVar(&f.bridge, "bridge", network.DefaultBridge, "name of the sandbox bridge; also names the nftables table (inet <bridge>)")
	fl.StringVar(&f.subnet, "subnet", network.DefaultSubnet, "IPv4 subnet of the sandboxes; must not overlap a network the host reaches (env SBX_SUBNET)")
	fl.StringSliceVar(&f.dnsUpstreams, "dns-upstream", nil, "resolver (host:port) the sandboxes' DNS server asks; repeatable (default: the host's /etc/resolv.conf)")
	fl.StringVar(&f.previewDomain, "preview-domain", "", "wildcard domain for host-based previews, http://{port}-{sandbox}.{domain}/ (e.g. preview.example.com, https://preview.example.com:8443); its DNS must point at this daemon (env SBX_PREVIEW_DOMAIN)")
	fl.IntVar(&f.connLimit, "max-conns-per-sandbox", network.DefaultConnLimit, "connections one sandbox may have open at once (tracked by the host's conntrack: outgoing and to the gateway); more are refused; 0 for no limit")
	fl.DurationVar(&f.http.HeaderTimeout, "http-header-timeout", daemon.DefaultHeaderTimeout, "API: time a client has to send a request's headers")
	fl.DurationVar(&f.http.IdleTimeout, "http-idle-timeout", daemon.DefaultIdleTimeout, "API: an idle keep-alive connection is closed after this (streams and WebSockets are not idle)")
	fl.IntVar(&f.http.MaxConns, "max-api-conns", daemon.DefaultMaxConns, "API: open connections in all; more are closed at once; 0 for no limit")
	fl.IntVar(&f.http.MaxClientConn, "max-api-conns-per-client", daemon.DefaultMaxClientConn, "API: open connections per client address (raise it behind a proxy or gateway); 0 for no limit")
	fl.StringSliceVar(&f.floorAllow, "egress-allow-private", nil, "CIDRs or addresses lifted out of the network floor: private, loopback, link-local or host ranges that sandboxes, the egress proxy, forward-rule handlers, team webhooks, bucket endpoints and image pulls may reach (e.g. a LAN 10.1.0.0/16, a local S3 at 127.0.0.1); comma-separated or repeatable (env SBX_EGRESS_ALLOW_PRIVATE)")
	fl.StringSliceVar(&f.floorDeny, "egress-deny", nil, "CIDRs added to the network floor no sandbox policy can lift, such as a cluster's pod and service CIDRs; comma-separated or repeatable (env SBX_EGRESS_DENY)")
	fl.BoolVar(&f.previewActivity, "preview-activity", true, "preview requests count as sandbox activity (they keep it from being stopped for idleness)")
}

func (f *netFlags) apply(cmd *cobra.Command, cfg *daemon.Config) error {
	switch f.network {
	case "bridge":
	case "none":
		cfg.NoNetwork = true
	default:
		return usagef("--network must be bridge or none, got %q", f.network)
	}
	cfg.Bridge = f.bridge
	cfg.Subnet = setting(cmd, "subnet", f.subnet, "SBX_SUBNET")
	cfg.DNSUpstreams = f.dnsUpstreams
	var err error
	if cfg.Floor.Allow, err = netfloor.ParsePrefixes(strings.Split(setting(cmd, "egress-allow-private", strings.Join(f.floorAllow, ","), "SBX_EGRESS_ALLOW_PRIVATE"), ",")); err != nil {
		return usagef("--egress-allow-private: %v", err)
	}
	if cfg.Floor.Deny, err = netfloor.ParsePrefixes(strings.Split(setting(cmd, "egress-deny", strings.Join(f.floorDeny, ","), "SBX_EGRESS_DENY"), ",")); err != nil {
		return usagef("--egress-deny: %v", err)
	}
	if f.connLimit < 0 {
		return usagef("--max-conns-per-sandbox must be 0 (no limit) or more, got %d", f.connLimit)
	}
	cfg.ConnLimit = f.connLimit
	noLimitIfZero(&cfg.ConnLimit)
	cfg.PreviewDomain = setting(cmd, "preview-domain", f.previewDomain, "SBX_PREVIEW_DOMAIN")
	cfg.PreviewNotActivity = !f.previewActivity
	if f.http.HeaderTimeout <= 0 || f.http.IdleTimeout <= 0 || f.http.MaxConns < 0 || f.http.MaxClientConn < 0 {
		return usagef("--http-header-timeout and --http-idle-timeout must be positive, --max-api-conns and --max-api-conns-per-client 0 (no limit) or more")
	}
	cfg.HTTP = f.http
	noLimitIfZero(&cfg.HTTP.MaxConns)
	noLimitIfZero(&cfg.HTTP.MaxClientConn)
	return nil
}

// noLimitIfZero turns a flag's 0 ("no limit") into the config's -1 (its 0
// means "the default").
func noLimitIfZero(n *int) {
	if *n == 0 {
		*n = -1
	}
}
