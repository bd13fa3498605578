package main

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/internal/doctor"
	"github.com/sbxhq/sbx/internal/netfloor"
)

// checkFloor reports the network floor sbx serve would enforce with the
// given allowances and additions (--egress-allow-private, --egress-deny):
// a warning when an allowance opens link-local, where the cloud metadata
// service answers.
func checkFloor(allow, deny []string) doctor.Result {
	r := doctor.Result{Check: "network floor", Status: doctor.OK}
	a, err := netfloor.ParsePrefixes(allow)
	if err == nil {
		_, err = netfloor.ParsePrefixes(deny)
	}
	if err != nil {
		r.Status, r.Detail, r.Fix = doctor.Fail, err.Error(), "give CIDRs such as 10.1.0.0/16 to --egress-allow-private and --egress-deny"
		return r
	}
	var ranges []string
	for _, p := range netfloor.Ranges {
		ranges = append(ranges, p.String())
	}
	r.Detail = fmt.Sprintf("sandboxes, the egress proxy, handlers, team webhooks, bucket endpoints and image pulls cannot reach %s, the host's addresses and networks", strings.Join(ranges, " "))
	if len(deny) > 0 {
		r.Detail += ", " + strings.Join(deny, " ")
	}
	if len(a) > 0 {
		r.Detail += "; allowed by the operator: " + strings.Join(allow, " ")
	}
	linkLocal := netip.MustParsePrefix("169.254.0.0/16")
	for _, p := range a {
		if p.Overlaps(linkLocal) {
			r.Status = doctor.Warn
			r.Fix = fmt.Sprintf("--egress-allow-private %s opens link-local, where cloud metadata answers (169.254.169.254): allow only what sandboxes need", p)
		}
	}
	return r
}

// floorSettings reads --egress-allow-private and --egress-deny (and their
// environment variables) as sbx serve does.
func floorSettings(cmd *cobra.Command, allow, deny []string) ([]string, []string) {
	split := func(flag string, v []string, env string) []string {
		var out []string
		for _, s := range strings.Split(setting(cmd, flag, strings.Join(v, ","), env), ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return split("egress-allow-private", allow, "SBX_EGRESS_ALLOW_PRIVATE"), split("egress-deny", deny, "SBX_EGRESS_DENY")
}
