package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz"
)

// With ForwardIdentity a host gets the caller's own principal and no key,
// whatever header of that name the caller sent; a public route's caller
// without a key of the gateway gets no principal forwarded at all.
func TestForwardIdentity(t *testing.T) {
	f := newFixture(t)
	gw := httptest.NewServer(New(Config{Cluster: f.cluster, Gate: &authz.Gate{Keys: auth.AdminToken(userKey)}, HostToken: hostToken, ForwardIdentity: true, ReadyTimeout: 10 * time.Second}))
	t.Cleanup(gw.Close)
	f.gw = gw
	sb := f.create(`{"name":"ident"}`)
	forged := auth.Principal{KeyID: "f0f0f0f0f0f0f0f0", Team: "other", Scopes: []auth.Scope{auth.ScopeExec}}.Header()
	send := func(method, path, key string) {
		t.Helper()
		req, _ := http.NewRequest(method, gw.URL+path, strings.NewReader(`{"cmd":["true"]}`))
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		req.Header.Set(auth.HeaderPrincipal, forged)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	send("POST", "/v1/sandboxes/ident/exec", userKey)
	send("GET", "/v1/sandboxes/"+sb.ID+"/ports/8080/", "")
	want := auth.Principal{KeyID: auth.Admin.KeyID, Team: auth.DefaultTeam, Scopes: []auth.Scope{auth.ScopeAdmin}}.Header()
	var exec, preview bool
	for _, r := range f.hosts["host-a"].requests() {
		switch {
		case r.Path == "/v1/sandboxes/"+sb.ID+"/exec":
			exec = true
			if r.Principal != want || r.Auth != "" {
				t.Errorf("the host got principal %q and key %q for the exec, want %q and none", r.Principal, r.Auth, want)
			}
		case strings.HasPrefix(r.Path, "/v1/sandboxes/"+sb.ID+"/ports/"):
			preview = true
			if r.Principal != "" || r.Auth != "" {
				t.Errorf("a keyless preview reached the host with principal %q and key %q", r.Principal, r.Auth)
			}
		}
	}
	if !exec || !preview {
		t.Fatalf("the host saw %+v", f.hosts["host-a"].requests())
	}
}
