package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/wire"
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
	var sb wire.Sandbox
	if rec.Code != http.StatusCreated || json.Unmarshal(rec.Body.Bytes(), &sb) != nil {
		t.Fatalf("admin create: %d %s", rec.Code, rec.Body)
	}
	for _, c := range []struct{ method, path, body, scope string }{
		{"POST", "/v1/sandboxes", `{"name":"b"}`, wire.ScopeSandboxesWrite},
		{"POST", "/v1/sandboxes/" + sb.ID + "/exec", `{"cmd":["true"]}`, wire.ScopeExec},
		{"DELETE", "/v1/sandboxes/" + sb.ID, "", wire.ScopeSandboxesWrite},
		{"POST", "/v1/keys", `{"scopes":["admin"]}`, wire.ScopeAdmin},
	} {
		rec := do(s, c.method, c.path, "ro", c.body)
		e := wantError(t, rec, http.StatusForbidden, wire.CodeMissingScope)
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

// memAudit is an in-memory store.AuditStore.
type memAudit struct {
	mu      sync.Mutex
	entries []wire.AuditEntry
}

func (m *memAudit) AppendAudit(_ context.Context, es []wire.AuditEntry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range es {
		e.Seq = int64(len(m.entries) + 1)
		m.entries = append(m.entries, e)
	}
	return nil
}

func (m *memAudit) ListAudit(_ context.Context, team string, after int64, limit int) ([]wire.AuditEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []wire.AuditEntry{}
	for _, e := range m.entries {
		if e.Seq > after && (team == "" || e.Team == team) {
			out = append(out, e)
		}
	}
	return out, nil
}

func (m *memAudit) PruneAudit(context.Context, time.Time) (int64, error) { return 0, nil }

// TestAuditRecordsMutations: mutating requests, refused ones too, are in
// the audit log with who, team, what and result; reads are not; a team's
// admin key reads only its team's entries.
func TestAuditRecordsMutations(t *testing.T) {
	f := newFake()
	keys := keyTable{
		"ro":    {KeyID: "k-ro", Team: "acme", Scopes: []auth.Scope{auth.ScopeSandboxesRead}},
		"admin": {KeyID: "k-admin", Team: "acme", Scopes: []auth.Scope{auth.ScopeAdmin}},
	}
	s := New(f, fakeImages{}, keys)
	mem := &memAudit{}
	audit := authz.NewAuditLog(mem, 0)
	defer audit.Close()
	s.SetTenancy(Tenancy{Gate: &authz.Gate{Keys: keys, Audit: audit, RequestID: RequestID}})
	do(s, "POST", "/v1/sandboxes", testKey, `{"name":"a"}`) // root, team default
	do(s, "GET", "/v1/sandboxes", "ro", "")
	do(s, "POST", "/v1/sandboxes", "ro", `{"name":"b"}`) // refused: 403
	rec := do(s, "GET", "/v1/audit", "admin", "")
	var got []wire.AuditEntry
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &got) != nil {
		t.Fatalf("audit: %d %s", rec.Code, rec.Body)
	}
	if len(got) != 1 {
		t.Fatalf("team acme's audit log: %+v; want only its refused create", got)
	}
	e := got[0]
	if e.KeyID != "k-ro" || e.Team != "acme" || e.Method != "POST" || e.Path != "/v1/sandboxes" ||
		e.Status != http.StatusForbidden || e.Code != wire.CodeMissingScope || e.Time.IsZero() || e.RequestID == "" {
		t.Fatalf("entry %+v", e)
	}
	all, _ := mem.ListAudit(context.Background(), "", 0, 0)
	if len(all) != 2 || all[0].KeyID != "admin" || all[0].Status != http.StatusCreated {
		t.Fatalf("whole log %+v; want the root's create and the refused one", all)
	}
}
