package network

import (
	"reflect"
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

func TestParseEgress(t *testing.T) {
	got, err := ParseEgress(&wire.EgressPolicy{
		Mode:    AllowList,
		CIDRs:   []string{"10.1.2.3", "192.168.7.9/16", "10.1.2.3/32"},
		Domains: []string{"Example.COM.", "*.api.example.com", "example.com"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := &store.Egress{Mode: AllowList,
		CIDRs:   []string{"10.1.2.3/32", "192.168.0.0/16"},
		Domains: []string{"*.api.example.com", "example.com"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if e, err := ParseEgress(nil); err != nil || e.Mode != AllowAll {
		t.Fatalf("nil policy: %+v, %v", e, err)
	}
	if e, err := ParseEgress(&wire.EgressPolicy{}); err != nil || e.Mode != AllowAll {
		t.Fatalf("empty mode: %+v, %v", e, err)
	}
}

func TestParseEgressRejects(t *testing.T) {
	bad := []wire.EgressPolicy{
		{Mode: "allow-some"},
		{Mode: AllowList},
		{Mode: BlockAll, CIDRs: []string{"10.0.0.0/8"}},
		{Mode: AllowAll, Domains: []string{"a.com"}},
		{Mode: AllowList, CIDRs: []string{"10.0.0.0/33"}},
		{Mode: AllowList, CIDRs: []string{"fd00::/8"}},
		{Mode: AllowList, CIDRs: []string{"example.com"}},
		{Mode: DenyList, Domains: []string{"a..b"}},
		{Mode: DenyList, Domains: []string{"*"}},
		{Mode: DenyList, Domains: []string{"a.*.com"}},
		{Mode: DenyList, Domains: []string{"10.0.0.1"}},
		{Mode: DenyList, Domains: []string{"exa mple.com"}},
	}
	for _, p := range bad {
		if _, err := ParseEgress(&p); !errdefs.Is(err, errdefs.KindInvalid) {
			t.Errorf("%+v: got %v, want an Invalid error", p, err)
		}
	}
	many := wire.EgressPolicy{Mode: AllowList}
	for range maxPolicyEntries + 1 {
		many.CIDRs = append(many.CIDRs, "10.0.0.1")
	}
	if _, err := ParseEgress(&many); !errdefs.Is(err, errdefs.KindInvalid) {
		t.Errorf("too many entries: %v", err)
	}
}

func TestResolveModes(t *testing.T) {
	if mode, e, err := Resolve("", nil); err != nil || mode != ModeBridge || e.Mode != AllowAll {
		t.Fatalf("default: %q %+v %v", mode, e, err)
	}
	if mode, e, err := Resolve(ModeNone, nil); err != nil || mode != ModeNone || e != nil {
		t.Fatalf("none: %q %+v %v", mode, e, err)
	}
	if _, _, err := Resolve(ModeNone, &wire.EgressPolicy{Mode: BlockAll}); !errdefs.Is(err, errdefs.KindInvalid) {
		t.Fatalf("none with egress: %v", err)
	}
	if _, _, err := Resolve("host", nil); !errdefs.Is(err, errdefs.KindInvalid) {
		t.Fatalf("unknown mode: %v", err)
	}
}

func TestVerdicts(t *testing.T) {
	allowNames := compile(&store.Egress{Mode: AllowList, Domains: []string{"example.com", "*.svc.test"}})
	allowCIDRs := compile(&store.Egress{Mode: AllowList, CIDRs: []string{"10.0.0.0/8"}})
	deny := compile(&store.Egress{Mode: DenyList, Domains: []string{"evil.test"}})
	cases := []struct {
		p    *policy
		name string
		want dnsVerdict
	}{
		{compile(nil), "anything.test", dnsForward},
		{compile(&store.Egress{Mode: BlockAll}), "example.com", dnsRefuse},
		{allowNames, "example.com", dnsAllow},
		{allowNames, "www.example.com", dnsRefuse}, // exact names match only themselves
		{allowNames, "a.svc.test", dnsAllow},
		{allowNames, "a.b.svc.test", dnsAllow},
		{allowNames, "svc.test", dnsRefuse}, // "*." is below the name only
		{allowNames, "xsvc.test", dnsRefuse},
		{allowCIDRs, "example.com", dnsRefuse}, // no names allowed: none resolve (no DNS tunnel)
		{deny, "evil.test", dnsDeny},
		{deny, "good.test", dnsForward},
	}
	for _, c := range cases {
		if got := c.p.verdict(c.name); got != c.want {
			t.Errorf("%s under %s: got %v, want %v", c.name, c.p.mode, got, c.want)
		}
	}
	if !allowNames.hasDomains() || allowCIDRs.hasDomains() {
		t.Error("hasDomains is wrong")
	}
}

func TestNames(t *testing.T) {
	id := "sbx-abcdefghijklmnop"
	if n := vethName(id); len(n) > 15 || n != vethName(id) {
		t.Fatalf("veth name %q: too long or not stable", n)
	}
	if vethName(id) == vethName("sbx-abcdefghijklmnoq") {
		t.Fatal("two ids give one veth name")
	}
	if chainName(id)+"_net" != netSetName(id) || chainName(id)+"_dns" != dnsSetName(id) {
		t.Fatal("set names must derive from the chain name (removeChainByName relies on it)")
	}
}
