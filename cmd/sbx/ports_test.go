package main

import (
	"reflect"
	"testing"

	"github.com/sbxhq/sbx/sdk"
)

func TestEgressFlags(t *testing.T) {
	cases := []struct {
		f    egressFlags
		want *sdk.EgressPolicy
		bad  bool
	}{
		{f: egressFlags{}, want: nil},
		{f: egressFlags{mode: "block-all"}, want: &sdk.EgressPolicy{Mode: "block-all"}},
		{f: egressFlags{allow: []string{"10.0.0.0/8", "1.2.3.4", "pypi.org", "*.x.org"}},
			want: &sdk.EgressPolicy{Mode: "allow-list", CIDRs: []string{"10.0.0.0/8", "1.2.3.4"}, Domains: []string{"pypi.org", "*.x.org"}}},
		{f: egressFlags{mode: "deny-list", deny: []string{"169.254.169.254"}},
			want: &sdk.EgressPolicy{Mode: "deny-list", CIDRs: []string{"169.254.169.254"}}},
		{f: egressFlags{allow: []string{"a.org"}, deny: []string{"b.org"}}, bad: true},
		{f: egressFlags{mode: "block-all", allow: []string{"a.org"}}, bad: true},
	}
	for _, c := range cases {
		got, err := c.f.policy()
		if c.bad {
			if err == nil {
				t.Errorf("%+v: no error", c.f)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v: got %+v, %v; want %+v", c.f, got, err, c.want)
		}
	}
}
