// Package authztest checks that every operation of a surface goes through
// the gate (internal/authz) as it declares: the route-enumeration tests of
// the API, the compatibility layers and the other surfaces feed it their
// own route tables, so an operation added without a decision fails them.
package authztest

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Op is one operation of a surface under test.
type Op struct {
	Name string   // for failures: "GET /v1/sandboxes/{id}"
	Need authz.Op // what the surface declares it needs
	// Do performs the operation with key and its principal (key "": no
	// credential) and returns the answer's HTTP status (or the status the
	// surface's refusal stands for).
	Do func(key string, p auth.Principal) int
	// Method and Path are what the audit entry of a write names.
	Method, Path string
}

// Harness is a gate over a real store (SQLite in a temp dir) with a key
// per role, every key of team "acme" (Other: team "rival").
type Harness struct {
	Gate  *authz.Gate
	keys  keyTable
	store *store.SQLite
}

// New opens the harness's store and gate.
func New(t *testing.T) *Harness {
	t.Helper()
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "sbx.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := &Harness{keys: keyTable{}, store: st}
	audit := authz.NewAuditLog(st, 0)
	t.Cleanup(audit.Close)
	// One request a key, then refused: the second request of a key shows
	// the limit applies.
	h.Gate = &authz.Gate{Keys: h.keys, Limits: auth.NewRateLimits(1e-6, 1), Audit: audit}
	return h
}

// Key makes a key of team with scopes and returns it and its principal.
func (h *Harness) Key(team string, scopes ...auth.Scope) (string, auth.Principal) {
	id := fmt.Sprintf("k%d", len(h.keys))
	p := auth.Principal{KeyID: id, Team: team, Scopes: scopes}
	h.keys["key-"+id] = p
	return "key-" + id, p
}

// every scope but admin
var scopes = []auth.Scope{auth.ScopeSandboxesRead, auth.ScopeSandboxesWrite, auth.ScopeExec, auth.ScopeImages, auth.ScopeMetricsRead, auth.ScopeTeamRead}

// Check asserts for op: no credential → 401; a key with every scope but
// the one op needs → 403, and for a write an audit entry; a key with it,
// its bucket drained → 429. other, when not nil, performs op with a key of
// another team that holds the scope on an object of team acme, and must
// answer 404.
func (h *Harness) Check(t *testing.T, op Op, other func(key string, p auth.Principal) int) {
	t.Helper()
	if got := op.Do("", auth.Principal{}); got != 401 {
		t.Errorf("%s without a credential: %d, want 401", op.Name, got)
	}
	need := op.Need.Scope
	if need == "" {
		need = auth.ScopeAdmin
	}
	var without []auth.Scope
	for _, s := range scopes {
		if s != need {
			without = append(without, s)
		}
	}
	key, p := h.Key("acme", without...)
	if got := op.Do(key, p); got != 403 {
		t.Errorf("%s with a key without %s: %d, want 403", op.Name, need, got)
	}
	entries, err := h.Gate.Audit.List(context.Background(), "acme", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	audited := slices.ContainsFunc(entries, func(e wire.AuditEntry) bool {
		return e.KeyID == p.KeyID && e.Method == op.Method && e.Path == op.Path && e.Status == 403
	})
	if audited != op.Need.Write {
		t.Errorf("%s (write %v): audited %v; the log has %+v", op.Name, op.Need.Write, audited, entries)
	}
	key, p = h.Key("acme", need)
	h.Gate.Limits.Allow(p.KeyID) // the one request its bucket holds
	if got := op.Do(key, p); got != 429 {
		t.Errorf("%s past its key's rate limit: %d, want 429", op.Name, got)
	}
	if other != nil {
		h.Gate.Limits = nil
		defer func() { h.Gate.Limits = auth.NewRateLimits(1e-6, 1) }()
		key, p = h.Key("rival", need)
		if got := other(key, p); got != 404 {
			t.Errorf("%s with another team's key: %d, want 404", op.Name, got)
		}
	}
}

type keyTable map[string]auth.Principal

func (k keyTable) Authenticate(_ context.Context, key string) (auth.Principal, error) {
	if p, ok := k[key]; ok {
		return p, nil
	}
	return auth.Principal{}, errdefs.Unauthorized(wire.CodeUnauthorized, "wrong API key")
}

// LookupKey finds a key by id, as the key service does for derived
// credentials (auth.KeyLookup).
func (k keyTable) LookupKey(_ context.Context, id string) (auth.Principal, error) {
	for _, p := range k {
		if p.KeyID == id {
			return p, nil
		}
	}
	return auth.Principal{}, errdefs.Unauthorized(wire.CodeUnauthorized, "unknown API key")
}
