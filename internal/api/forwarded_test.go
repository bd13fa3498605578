package api

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sbxhq/sbx/internal/auth"
)

// A forwarded principal counts only on a connection whose verified client
// certificate names a forwarder; from anyone else it is refused, even
// beside the admin key, and it is never the key's principal.
func TestForwardedPrincipal(t *testing.T) {
	s := New(newFake(), fakeImages{}, auth.AdminToken(testKey))
	admin := auth.Principal{KeyID: auth.Admin.KeyID, Team: auth.DefaultTeam, Scopes: []auth.Scope{auth.ScopeAdmin}}.Header()
	tenant := auth.Principal{KeyID: "k-a", Team: "team-a", Scopes: []auth.Scope{auth.ScopeSandboxesRead}}
	from := func(cn string) *http.Request {
		r := httptest.NewRequest("GET", "/v1/sandboxes", nil)
		if cn != "" {
			leaf := &x509.Certificate{Subject: pkix.Name{CommonName: cn}}
			r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{leaf}}}
		}
		return r
	}
	for _, tc := range []struct {
		what       string
		forwarders []string
		cn, key    string
	}{
		{"plain http", nil, "", ""},
		{"plain http with the admin key", nil, "", testKey},
		{"no forwarders set", nil, "sbx-gateway", ""},
		{"another client name", []string{"sbx-gateway"}, "sbx-intruder", testKey},
	} {
		s.SetForwarders(tc.forwarders)
		r := from(tc.cn)
		r.Header.Set(auth.HeaderPrincipal, admin)
		if tc.key != "" {
			r.Header.Set("Authorization", "Bearer "+tc.key)
		}
		if p, err := s.principal(r); err == nil {
			t.Errorf("%s: a forwarded principal was taken: %+v", tc.what, p)
		}
	}
	s.SetForwarders([]string{"sbx-gateway"})
	r := from("sbx-gateway")
	r.Header.Set(auth.HeaderPrincipal, tenant.Header())
	r.Header.Set("Authorization", "Bearer "+testKey) // the key does not count beside it
	p, err := s.principal(r)
	if err != nil || p.KeyID != "k-a" || p.Team != "team-a" || len(p.Scopes) != 1 || p.Scopes[0] != auth.ScopeSandboxesRead {
		t.Fatalf("the gateway's forwarded principal: %+v %v", p, err)
	}
	r.Header.Set(auth.HeaderPrincipal, `{"keyId":"","team":"x"}`)
	if _, err := s.principal(r); err == nil {
		t.Error("a principal without a key id was taken")
	}
}
