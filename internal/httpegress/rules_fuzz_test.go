package httpegress

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// FuzzParseRules feeds tenant egress rules (as the API decodes them) and
// requests to the rule checker and matcher. A refusal is a 400 naming a
// rule or secret; an accepted section is already normal (parsing it again
// changes nothing), carries no header-splitting bytes, and the rule a
// request matches is the first whose host, method and path all fit.
//
//	go test -run '^$' -fuzz '^FuzzParseRules$' -fuzztime 1m ./internal/httpegress/
func FuzzParseRules(f *testing.F) {
	for _, s := range []string{
		`{"rules":[{"host":"api.example.com","action":"inject","inject":[{"header":"Authorization","secret":"k","prefix":"Bearer "}]}]}`,
		`{"rules":[{"host":"*.Example.COM.","method":"post","pathPrefix":"/v1/","action":"deny"}]}`,
		`{"rules":[{"host":"*","action":"allow"},{"host":"x:443","action":"rewrite","rewrite":{"scheme":"https","host":"y:8443","pathPrefix":"/z"}}]}`,
		`{"rules":[{"host":"h","action":"forward","forward":{"url":"http://127.0.0.1:9/x","timeoutSeconds":0}}]}`,
		`{"rules":[{"host":"h","action":"inject","inject":[{"header":"X","secret":"k","prefix":"a\r\nB: c"}]}]}`,
		`{"rules":[{"host":"a..b","action":"allow"}]}`, `{"rules":null}`, `{}`,
	} {
		f.Add([]byte(s), "GET", "api.example.com:443", "/v1/x")
	}
	f.Fuzz(func(t *testing.T, section []byte, method, host, path string) {
		var in wire.HTTPEgress
		if json.Unmarshal(section, &in) != nil {
			return
		}
		out, err := ParseRules(&in)
		if err != nil {
			if !errdefs.Is(err, errdefs.KindInvalid) {
				t.Fatalf("refusal is not a 400: %v", err)
			}
			if c := errdefs.CodeOf(err); c != wire.CodeInvalidHTTPRule && c != wire.CodeInvalidSecret {
				t.Fatalf("refusal has code %q: %v", c, err)
			}
			return
		}
		again, err := ParseRules(out)
		if err != nil || !reflect.DeepEqual(again, out) {
			t.Fatalf("a normalised section does not parse to itself: %v\n%+v\n%+v", err, out, again)
		}
		for i, r := range out.Rules {
			for _, inj := range r.Inject {
				if !validHeaderName(inj.Header) || strings.ContainsAny(inj.Prefix, "\r\n") {
					t.Fatalf("rule %d: accepted inject %+v", i, inj)
				}
			}
		}
		fits := func(r wire.HTTPRule) bool {
			h := strings.ToLower(strings.TrimSuffix(host, "."))
			return hostMatches(r.Host, h) && (r.Method == "" || r.Method == method) && strings.HasPrefix(path, r.PathPrefix)
		}
		i := match(out, method, host, path)
		for j, r := range out.Rules {
			if j < i || i < 0 {
				if fits(r) {
					t.Fatalf("rule %d fits %s %s%s but match chose %d", j, method, host, path, i)
				}
			} else if j == i && !fits(r) {
				t.Fatalf("match chose rule %d, which does not fit %s %s%s", i, method, host, path)
			}
		}
	})
}
