package network

import (
	"net/netip"
	"slices"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpegress"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Network modes.
const (
	ModeBridge = "bridge" // own namespace on the sbx bridge (the default)
	ModeNone   = "none"   // loopback only
)

// Egress policy modes.
const (
	AllowAll  = "allow-all"
	BlockAll  = "block-all"
	AllowList = "allow-list" // only the listed CIDRs and domains
	DenyList  = "deny-list"  // everything but the listed CIDRs and domains
)

// Limits of a policy.
const (
	maxPolicyEntries = 256
	maxDomainLen     = 253
)

// ParseEgress checks a policy from the API and returns it normalised for the
// store: CIDRs masked (an address becomes a /32), domains lower-case without
// a trailing dot, both sorted and de-duplicated. A nil policy is allow-all.
//
// A domain "example.com" matches that name only; "*.example.com" matches
// every name below it (not example.com itself).
func ParseEgress(p *wire.EgressPolicy) (*store.Egress, error) {
	if p == nil {
		return &store.Egress{Mode: AllowAll}, nil
	}
	out := &store.Egress{Mode: p.Mode}
	if out.Mode == "" {
		out.Mode = AllowAll
	}
	var err error
	if out.HTTP, err = httpegress.ParseRules(p.HTTP); err != nil {
		return nil, err
	}
	switch out.Mode {
	case AllowAll, BlockAll:
		if len(p.CIDRs)+len(p.Domains) > 0 {
			return nil, errdefs.Invalid(wire.CodeInvalidEgress, "egress mode %s takes no cidrs or domains; use allow-list or deny-list", out.Mode)
		}
		return out, nil
	case AllowList, DenyList:
	default:
		return nil, errdefs.Invalid(wire.CodeInvalidEgress, "unknown egress mode %q: use allow-all, block-all, allow-list or deny-list", p.Mode)
	}
	if len(p.CIDRs)+len(p.Domains) == 0 {
		return nil, errdefs.Invalid(wire.CodeInvalidEgress, "egress mode %s needs at least one entry in cidrs or domains", out.Mode)
	}
	if len(p.CIDRs) > maxPolicyEntries || len(p.Domains) > maxPolicyEntries {
		return nil, errdefs.Invalid(wire.CodeInvalidEgress, "an egress policy takes at most %d cidrs and %d domains", maxPolicyEntries, maxPolicyEntries)
	}
	for _, c := range p.CIDRs {
		pfx, err := parseCIDR(c)
		if err != nil {
			return nil, err
		}
		out.CIDRs = append(out.CIDRs, pfx.String())
	}
	for _, d := range p.Domains {
		name, err := parseDomain(d)
		if err != nil {
			return nil, err
		}
		out.Domains = append(out.Domains, name)
	}
	slices.Sort(out.CIDRs)
	out.CIDRs = slices.Compact(out.CIDRs)
	slices.Sort(out.Domains)
	out.Domains = slices.Compact(out.Domains)
	return out, nil
}

// EgressToAPI is the wire form of a stored policy; nil is allow-all.
func EgressToAPI(e *store.Egress) *wire.EgressPolicy {
	if e == nil {
		return &wire.EgressPolicy{Mode: AllowAll}
	}
	return &wire.EgressPolicy{Mode: e.Mode, CIDRs: slices.Clone(e.CIDRs), Domains: slices.Clone(e.Domains), HTTP: e.HTTP}
}

func parseCIDR(s string) (netip.Prefix, error) {
	bad := func() (netip.Prefix, error) {
		return netip.Prefix{}, errdefs.Invalid(wire.CodeInvalidEgress, "egress cidr %q is not an IPv4 address or CIDR such as 10.0.0.0/8 (sandboxes have IPv4 only)", s)
	}
	if a, err := netip.ParseAddr(s); err == nil {
		if !a.Is4() {
			return bad()
		}
		return netip.PrefixFrom(a, 32), nil
	}
	pfx, err := netip.ParsePrefix(s)
	if err != nil || !pfx.Addr().Is4() {
		return bad()
	}
	return pfx.Masked(), nil
}

// parseDomain checks a DNS name, optionally starting with "*.".
func parseDomain(s string) (string, error) {
	name := strings.TrimSuffix(strings.ToLower(s), ".")
	bad := func(why string) (string, error) {
		return "", errdefs.Invalid(wire.CodeInvalidEgress, "egress domain %q: %s", s, why)
	}
	rest := strings.TrimPrefix(name, "*.")
	if rest == "" || len(name) > maxDomainLen {
		return bad("must be a DNS name such as example.com or *.example.com")
	}
	if _, err := netip.ParseAddr(rest); err == nil {
		return bad("is an address; put it in cidrs")
	}
	for _, label := range strings.Split(rest, ".") {
		if label == "" || len(label) > 63 {
			return bad("labels must be 1 to 63 characters")
		}
		for _, c := range []byte(label) {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return bad("use letters, digits, '-' and '_'; a '*' may only start the name as \"*.\"")
			}
		}
	}
	return name, nil
}

// policy is a stored policy compiled for matching.
type policy struct {
	mode   string
	exact  map[string]bool
	suffix []string // ".example.com" for "*.example.com"
}

func compile(e *store.Egress) *policy {
	p := &policy{mode: AllowAll, exact: map[string]bool{}}
	if e == nil {
		return p
	}
	p.mode = e.Mode
	for _, d := range e.Domains {
		if rest, ok := strings.CutPrefix(d, "*."); ok {
			p.suffix = append(p.suffix, "."+rest)
		} else {
			p.exact[d] = true
		}
	}
	return p
}

// hasDomains reports whether the policy has domain rules: then DNS must go
// through sbx, which learns the addresses of the listed names.
func (p *policy) hasDomains() bool { return len(p.exact)+len(p.suffix) > 0 }

// matches reports whether a DNS name (lower-case, no trailing dot) is one of
// the policy's domains.
func (p *policy) matches(name string) bool {
	if p.exact[name] {
		return true
	}
	for _, s := range p.suffix {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// dnsVerdict is what the DNS server does with a query.
type dnsVerdict int

const (
	dnsForward  dnsVerdict = iota // answer from upstream, learn nothing
	dnsRefuse                     // answer REFUSED without asking upstream
	dnsAllow                      // answer from upstream and allow the addresses
	dnsDeny                       // learn the addresses to block them, answer REFUSED
	dnsServFail                   // learning failed or is overrun: answer SERVFAIL
)

// verdict decides a query for name under the policy.
func (p *policy) verdict(name string) dnsVerdict {
	switch p.mode {
	case BlockAll:
		return dnsRefuse
	case AllowList:
		// A policy that allows no names resolves none: forwarding names
		// upstream would let a sandbox leak data in its queries (a DNS
		// tunnel) past an allow-list of CIDRs.
		if p.matches(name) {
			return dnsAllow
		}
		return dnsRefuse
	case DenyList:
		if p.matches(name) {
			return dnsDeny
		}
	}
	return dnsForward
}
