package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/sdk"
)

// TestEveryRouteHasAScope keeps the route table honest: a route that needs
// a key names the scope it needs (one the key service knows), so nobody
// adds a route that a read-only key can use by accident.
func TestEveryRouteHasAScope(t *testing.T) {
	s, _ := newTestServer(t)
	known := map[auth.Scope]bool{auth.ScopeAdmin: true, auth.ScopeSandboxesWrite: true, auth.ScopeSandboxesRead: true,
		auth.ScopeExec: true, auth.ScopeImages: true, auth.ScopeMetricsRead: true, auth.ScopeTeamRead: true}
	for _, rt := range s.routes() {
		if rt.public && rt.pattern != "/metrics" {
			continue
		}
		if !known[rt.scope] {
			t.Errorf("%s %s: scope %q; every route that needs a key names one of the scopes in internal/auth/scopes.go", rt.method, rt.pattern, rt.scope)
		}
		if rt.method == http.MethodGet && rt.scope == auth.ScopeSandboxesWrite {
			t.Errorf("%s %s reads but needs sandboxes:write", rt.method, rt.pattern)
		}
	}
}

// keyTable is an Authenticator with fixed keys.
type keyTable map[string]auth.Principal

func (k keyTable) Authenticate(ctx context.Context, key string) (auth.Principal, error) {
	if p, ok := k[key]; ok {
		return p, nil
	}
	return auth.AdminToken(testKey).Authenticate(ctx, key)
}

func TestReadOnlyKeyCannotWrite(t *testing.T) {
	f := newFake()
	keys := keyTable{"ro": {KeyID: "k1", Team: auth.DefaultTeam, Scopes: []auth.Scope{auth.ScopeSandboxesRead}}}
	s := New(f, fakeImages{}, keys)
	rec := do(s, "POST", "/v1/sandboxes", testKey, `{"name":"a"}`)
	var sb sdk.Sandbox
	if rec.Code != http.StatusCreated || json.Unmarshal(rec.Body.Bytes(), &sb) != nil {
		t.Fatalf("admin create: %d %s", rec.Code, rec.Body)
	}
	for _, c := range []struct{ method, path, body, scope string }{
		{"POST", "/v1/sandboxes", `{"name":"b"}`, sdk.ScopeSandboxesWrite},
		{"POST", "/v1/sandboxes/" + sb.ID + "/exec", `{"cmd":["true"]}`, sdk.ScopeExec},
		{"DELETE", "/v1/sandboxes/" + sb.ID, "", sdk.ScopeSandboxesWrite},
		{"POST", "/v1/keys", `{"scopes":["admin"]}`, sdk.ScopeAdmin},
	} {
		rec := do(s, c.method, c.path, "ro", c.body)
		e := wantError(t, rec, http.StatusForbidden, sdk.CodeMissingScope)
		if !strings.Contains(e.Message, c.scope) {
			t.Errorf("%s %s: message %q does not name the scope %s", c.method, c.path, e.Message, c.scope)
		}
	}
	if rec := do(s, "GET", "/v1/sandboxes/"+sb.ID, "ro", ""); rec.Code != http.StatusOK {
		t.Fatalf("read-only get: %d %s", rec.Code, rec.Body)
	}
	if _, err := f.Get(context.Background(), sb.ID); err != nil {
		t.Fatalf("a refused delete still deleted the sandbox: %v", err)
	}
}
