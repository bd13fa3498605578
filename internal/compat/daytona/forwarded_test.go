package daytona

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz"
)

// Through the cluster gateway a host's Daytona layer gets no key but the
// caller's principal in header auth.HeaderPrincipal (the gateway forwards
// toolbox calls so): it is believed over mutual TLS from the gateway's
// certificate alone, and then the caller's own scopes hold.
func TestForwardedPrincipal(t *testing.T) {
	h := New(Config{Sandboxes: &fakeSandboxes{}, Images: fakeImages{"python": true},
		Gate: &authz.Gate{Keys: auth.AdminToken(testKey), Forwarders: []string{"sbx-gateway"}}})
	reader := auth.Principal{KeyID: "k-a", Team: "team-a", Scopes: []auth.Scope{auth.ScopeSandboxesRead}}.Header()
	send := func(method, path, cn, principal string) int {
		r := httptest.NewRequest(method, path, strings.NewReader(`{}`))
		if cn != "" {
			leaf := &x509.Certificate{Subject: pkix.Name{CommonName: cn}}
			r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{leaf}}}
		}
		r.Header.Set(auth.HeaderPrincipal, principal)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec.Code
	}
	if code := send("GET", "/daytona/api/sandbox", "sbx-gateway", reader); code != 200 {
		t.Errorf("list by the gateway's forwarded reader: %d, want 200", code)
	}
	if code := send("POST", "/daytona/api/sandbox", "sbx-gateway", reader); code != 403 {
		t.Errorf("create by the gateway's forwarded reader: %d, want 403 (its own scopes hold)", code)
	}
	if code := send("GET", "/daytona/api/sandbox", "", reader); code != 401 {
		t.Errorf("the header without TLS: %d, want 401", code)
	}
	if code := send("GET", "/daytona/api/sandbox", "sbx-intruder", reader); code != 401 {
		t.Errorf("the header from another client certificate: %d, want 401", code)
	}
}
