package main

import (
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/sdk"
)

// egressFlags are the flags that make an egress policy: --egress MODE and
// the repeatable --allow and --deny, whose entries are CIDRs or domains.
type egressFlags struct {
	network, mode string
	allow, deny   []string
}

// addNetworkFlags adds --network and the egress flags to sbx create.
func addNetworkFlags(cmd *cobra.Command) *egressFlags {
	e := &egressFlags{}
	cmd.Flags().StringVar(&e.network, "network", "", `network: bridge (default: own address, NAT, DNS) or none (loopback only)`)
	e.register(cmd)
	return e
}

func (e *egressFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&e.mode, "egress", "", "egress policy: allow-all (default), block-all, allow-list or deny-list")
	f.StringArrayVar(&e.allow, "allow", nil, "allow only this CIDR, address or domain (*.example.com for subdomains); repeatable, implies --egress allow-list")
	f.StringArrayVar(&e.deny, "deny", nil, "block this CIDR, address or domain; repeatable, implies --egress deny-list")
}

// policy returns the policy the flags describe, nil if they describe none.
func (e *egressFlags) policy() (*sdk.EgressPolicy, error) {
	if len(e.allow) > 0 && len(e.deny) > 0 {
		return nil, usagef("use --allow or --deny, not both")
	}
	p := &sdk.EgressPolicy{Mode: e.mode}
	entries := e.allow
	switch {
	case len(e.allow) > 0:
		p.Mode = sdk.EgressAllowList
	case len(e.deny) > 0:
		p.Mode, entries = sdk.EgressDenyList, e.deny
	case e.mode == "":
		return nil, nil
	}
	if e.mode != "" && e.mode != p.Mode {
		return nil, usagef("--egress %s does not go with --allow or --deny", e.mode)
	}
	for _, s := range entries {
		if _, err := netip.ParsePrefix(s); err == nil {
			p.CIDRs = append(p.CIDRs, s)
		} else if _, err := netip.ParseAddr(s); err == nil {
			p.CIDRs = append(p.CIDRs, s)
		} else {
			p.Domains = append(p.Domains, s)
		}
	}
	return p, nil
}

// applyCreate puts the flags into a create request.
func (e *egressFlags) applyCreate(req *sdk.CreateSandboxRequest) error {
	p, err := e.policy()
	if err != nil {
		return err
	}
	req.Network, req.Egress = e.network, p
	return nil
}

func newEgressCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "egress COMMAND",
		Short: "Show or change what a sandbox may connect to",
		Long: `Show or change the egress policy of a sandbox (network bridge). A change
reaches a running sandbox at once: new connections follow it, open ones stay.
A blocked connection is refused at once.

Domain entries hold as the name's addresses change: sbx's DNS server learns
the addresses each time the sandbox resolves the name.

--http FILE adds an http section: the sandbox's HTTP and HTTPS then go through
the daemon's egress proxy, whose rules allow, deny, inject secrets (sbx secret),
rewrite or forward requests to a handler; sbx egress log shows what it saw.`,
		Example: `  sbx egress get box
  sbx egress set box --egress block-all
  sbx egress set box --allow 10.0.0.0/8 --allow pypi.org --allow '*.pythonhosted.org'
  sbx egress set box --deny 169.254.169.254
  sbx egress set box --egress allow-all
  sbx egress set box --http rules.json
  sbx egress log box --follow`,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	get := &cobra.Command{Use: "get SANDBOX", Short: "Show a sandbox's network and egress policy", Args: exactArgs(1, "SANDBOX")}
	out := addOutputFlag(get)
	get.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := g.client()
		if err != nil {
			return err
		}
		info, err := c.GetNetwork(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		return out.print(cmd.OutOrStdout(), info, func(w io.Writer) error { return printNetwork(w, info) })
	}
	set := &cobra.Command{Use: "set SANDBOX (--egress MODE | --allow X... | --deny X...) [--http FILE]", Short: "Replace a sandbox's egress policy", Args: exactArgs(1, "SANDBOX")}
	var e egressFlags
	e.register(set)
	httpRules := addHTTPRulesFlag(set) // egress_http.go
	setOut := addOutputFlag(set)
	set.RunE = func(cmd *cobra.Command, args []string) error {
		p, err := e.policy()
		if err != nil {
			return err
		}
		h, err := httpRules.rules(cmd.InOrStdin())
		if err != nil {
			return err
		}
		if p == nil && h != nil {
			p = &sdk.EgressPolicy{}
		}
		if p == nil {
			return usagef("give --egress, --allow, --deny or --http")
		}
		p.HTTP = h
		c, err := g.client()
		if err != nil {
			return err
		}
		info, err := c.SetEgress(cmd.Context(), args[0], *p)
		if err != nil {
			return err
		}
		return setOut.print(cmd.OutOrStdout(), info, func(w io.Writer) error { return printNetwork(w, info) })
	}
	cmd.AddCommand(get, set, newEgressLogCmd(g)) // egress_http.go
	return cmd
}

func printNetwork(w io.Writer, info *sdk.NetworkInfo) error {
	fmt.Fprintf(w, "Network:  %s\n", info.Mode)
	if info.Mode != sdk.NetworkBridge {
		return nil
	}
	fmt.Fprintf(w, "Address:  %s\n", orDash(info.Address))
	fmt.Fprintf(w, "Gateway:  %s\n", orDash(info.Gateway))
	if e := info.Egress; e != nil {
		fmt.Fprintf(w, "Egress:   %s\n", e.Mode)
		for _, s := range append(append([]string(nil), e.CIDRs...), e.Domains...) {
			fmt.Fprintf(w, "          %s\n", s)
		}
		if e.HTTP != nil {
			fmt.Fprintf(w, "HTTP:     %d rules (sbx egress get -o json shows them)\n", len(e.HTTP.Rules))
		}
	}
	return nil
}

func newPortCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "port COMMAND",
		Short: "Expose sandbox ports as preview URLs",
		Long: `Expose a port of a sandbox (network bridge) through the daemon. A private
port (the default) opens with the API key, the port's token (header
X-Sbx-Preview-Token, or ?sbx_token=… once, which sets a cookie) or a signed
URL; a public one opens for anyone who can reach the daemon. HTTP, streamed
responses and WebSocket pass through. A request to a stopped sandbox starts it.`,
		Example: `  sbx port expose web 3000
  curl -H "X-Sbx-Preview-Token: $TOKEN" http://127.0.0.1:7423/v1/sandboxes/web/ports/3000/
  sbx port url web 3000 --expires 2h
  sbx port ls web
  sbx port rm web 3000`,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}

	expose := &cobra.Command{Use: "expose SANDBOX PORT [--public]", Short: "Expose a port and print its preview URL and token", Args: exactArgs(2, "SANDBOX and PORT")}
	public := expose.Flags().Bool("public", false, "reachable without key or token")
	exposeOut := addOutputFlag(expose)
	expose.RunE = func(cmd *cobra.Command, args []string) error {
		port, err := parsePort(args[1])
		if err != nil {
			return err
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		p, err := c.ExposePort(cmd.Context(), args[0], sdk.ExposePortRequest{Port: port, Public: *public})
		if err != nil {
			return err
		}
		return exposeOut.print(cmd.OutOrStdout(), p, func(w io.Writer) error { return printPorts(w, []sdk.Port{*p}) })
	}

	list := &cobra.Command{Use: "ls SANDBOX", Aliases: []string{"list"}, Short: "List exposed ports", Args: exactArgs(1, "SANDBOX")}
	listOut := addOutputFlag(list)
	list.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := g.client()
		if err != nil {
			return err
		}
		ports, err := c.ListPorts(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		return listOut.print(cmd.OutOrStdout(), ports, func(w io.Writer) error { return printPorts(w, ports) })
	}

	rm := &cobra.Command{Use: "rm SANDBOX PORT", Short: "Unexpose a port; its token stops working", Args: exactArgs(2, "SANDBOX and PORT")}
	rm.RunE = func(cmd *cobra.Command, args []string) error {
		port, err := parsePort(args[1])
		if err != nil {
			return err
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		return c.UnexposePort(cmd.Context(), args[0], port)
	}

	sign := &cobra.Command{Use: "url SANDBOX PORT [--expires DURATION]", Short: "Print a signed preview URL that needs no key or token until it expires", Args: exactArgs(2, "SANDBOX and PORT")}
	expires := sign.Flags().Duration("expires", time.Hour, "how long the URL works (at most 720h)")
	sign.RunE = func(cmd *cobra.Command, args []string) error {
		port, err := parsePort(args[1])
		if err != nil {
			return err
		}
		if *expires < time.Second {
			return usagef("--expires must be at least 1s")
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		u, err := c.SignPortURL(cmd.Context(), args[0], sdk.SignPortRequest{Port: port, ExpiresInSeconds: int(expires.Seconds())})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(cmd.OutOrStdout(), u.URL)
		return err
	}
	cmd.AddCommand(expose, list, rm, sign)
	return cmd
}

func parsePort(s string) (int, error) {
	p, err := strconv.Atoi(s)
	if err != nil || p < 1 || p > 65535 {
		return 0, usagef("PORT must be a number from 1 to 65535, got %q", s)
	}
	return p, nil
}

func printPorts(w io.Writer, ports []sdk.Port) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "PORT\tACCESS\tURL\tTOKEN")
	for _, p := range ports {
		access, token := "private", p.Token
		if p.Public {
			access, token = "public", "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", p.Port, access, p.URL, token)
	}
	return tw.Flush()
}

// networkLines adds a sandbox's network to sbx get.
func networkLines(line func(k, v string), sb *sdk.Sandbox) {
	if sb.Network == "" {
		return
	}
	v := sb.Network
	if e := sb.Egress; e != nil && sb.Network == sdk.NetworkBridge {
		v += ", egress " + e.Mode
		if n := len(e.CIDRs) + len(e.Domains); n > 0 {
			v += fmt.Sprintf(" (%d entries)", n)
		}
	}
	line("Network", v)
}
