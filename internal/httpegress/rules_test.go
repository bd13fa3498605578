package httpegress

import (
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

func TestRuleMatching(t *testing.T) {
	h, err := ParseRules(&wire.HTTPEgress{Rules: []wire.HTTPRule{
		{Host: "API.example.com", Method: "post", PathPrefix: "/v1/", Action: "deny"},
		{Host: "api.example.com", Action: "inject", Inject: []wire.HTTPInject{{Header: "Authorization", Secret: "key", Prefix: "Bearer "}}},
		{Host: "*.example.org", Action: "allow"},
		{Host: "svc.test:8080", Action: "deny"},
		{Host: "*", PathPrefix: "/admin", Action: "deny"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if h.Rules[0].Host != "api.example.com" || h.Rules[0].Method != "POST" {
		t.Fatalf("not normalised: %+v", h.Rules[0])
	}
	for _, c := range []struct {
		method, host, path string
		want               int
	}{
		{"POST", "api.example.com", "/v1/chat", 0},
		{"GET", "api.example.com", "/v1/chat", 1},
		{"POST", "api.example.com:443", "/v2/", 1},
		{"POST", "API.Example.com.", "/v1/x", 0},
		{"GET", "a.b.example.org", "/", 2},
		{"GET", "example.org", "/", -1},
		{"GET", "svc.test:8080", "/", 3},
		{"GET", "svc.test", "/", -1},
		{"GET", "other.test", "/admin/x", 4},
		{"GET", "other.test", "/", -1},
	} {
		if got := match(h, c.method, c.host, c.path); got != c.want {
			t.Errorf("match(%s %s%s) = %d, want %d", c.method, c.host, c.path, got, c.want)
		}
	}
	if !namesHost(h, "api.example.com") || !namesHost(h, "x.example.org") || namesHost(h, "other.test") {
		t.Error("namesHost: a catch-all '*' must not decrypt every host; named ones must be")
	}
	if match(nil, "GET", "x", "/") != -1 {
		t.Error("no rules must match nothing")
	}
}

func TestParseRulesRejects(t *testing.T) {
	for name, r := range map[string]wire.HTTPRule{
		"empty host":       {Host: "", Action: "allow"},
		"star inside":      {Host: "a.*.com", Action: "allow"},
		"bad action":       {Host: "a.test", Action: "block"},
		"inject no list":   {Host: "a.test", Action: "inject"},
		"inject bad name":  {Host: "a.test", Action: "inject", Inject: []wire.HTTPInject{{Header: "Bad Header", Secret: "k"}}},
		"inject bad secr":  {Host: "a.test", Action: "inject", Inject: []wire.HTTPInject{{Header: "X-Key", Secret: "a/b"}}},
		"inject crlf":      {Host: "a.test", Action: "inject", Inject: []wire.HTTPInject{{Header: "X-Key", Secret: "k", Prefix: "a\r\nB: c"}}},
		"rewrite empty":    {Host: "a.test", Action: "rewrite", Rewrite: &wire.HTTPRewrite{}},
		"rewrite scheme":   {Host: "a.test", Action: "rewrite", Rewrite: &wire.HTTPRewrite{Scheme: "ftp"}},
		"forward no url":   {Host: "a.test", Action: "forward", Forward: &wire.HTTPForwardTo{URL: "not a url"}},
		"forward timeout":  {Host: "a.test", Action: "forward", Forward: &wire.HTTPForwardTo{URL: "http://h/", TimeoutSeconds: 61}},
		"forward metadata": {Host: "a.test", Action: "forward", Forward: &wire.HTTPForwardTo{URL: "http://169.254.99.1/latest"}},
		"forward loopback": {Host: "a.test", Action: "forward", Forward: &wire.HTTPForwardTo{URL: "http://127.0.0.1:9000/"}},
		"field mismatch":   {Host: "a.test", Action: "allow", Rewrite: &wire.HTTPRewrite{Host: "b.test"}},
		"path no slash":    {Host: "a.test", Action: "allow", PathPrefix: "v1"},
		"method not alpha": {Host: "a.test", Action: "allow", Method: "G3T"},
	} {
		_, err := ParseRules(&wire.HTTPEgress{Rules: []wire.HTTPRule{{Host: "ok.test", Action: "allow"}, r}})
		var e *errdefs.Error
		if !errdefs.Is(err, errdefs.KindInvalid) || !strings.Contains(err.Error(), "http rule 1") {
			t.Errorf("%s: %v, want invalid naming rule 1", name, err)
		} else if ok := asErr(err, &e); !ok || (e.Code != wire.CodeInvalidHTTPRule && e.Code != wire.CodeInvalidSecret) {
			t.Errorf("%s: code %v", name, err)
		}
	}
	f, err := ParseRules(&wire.HTTPEgress{Rules: []wire.HTTPRule{{Host: "a.test", Action: "forward", Forward: &wire.HTTPForwardTo{URL: "http://h/"}}}})
	if err != nil || f.Rules[0].Forward.TimeoutSeconds != defaultTimeout {
		t.Fatalf("forward default timeout: %+v %v", f, err)
	}
}

func asErr(err error, e **errdefs.Error) bool {
	x, ok := err.(*errdefs.Error)
	*e = x
	return ok
}
