package api

import (
	"context"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// pprofKeys knows the operator's key and a team's admin key.
type pprofKeys struct{}

func (pprofKeys) Authenticate(_ context.Context, key string) (auth.Principal, error) {
	switch key {
	case "operator":
		return auth.Admin, nil
	case "team-admin":
		return auth.Principal{KeyID: "k1", Team: "t1", Scopes: []auth.Scope{auth.ScopeAdmin}}, nil
	}
	return auth.Principal{}, errdefs.Unauthorized(wire.CodeUnauthorized, "wrong API key")
}

// The profiles are the operator's: a team's admin key and no key are refused.
func TestPprofOperatorOnly(t *testing.T) {
	s := New(newFake(), fakeImages{}, pprofKeys{})
	if rec := do(s, "GET", "/debug/pprof/goroutine?debug=1", "operator", ""); rec.Code != 200 || !strings.Contains(rec.Body.String(), "goroutine") {
		t.Errorf("operator: %d %.100s", rec.Code, rec.Body)
	}
	if rec := do(s, "GET", "/debug/pprof/", "operator", ""); rec.Code != 200 {
		t.Errorf("operator index: %d", rec.Code)
	}
	wantError(t, do(s, "GET", "/debug/pprof/goroutine", "team-admin", ""), 403, wire.CodeMissingScope)
	wantError(t, do(s, "GET", "/debug/pprof/heap", "", ""), 401, wire.CodeUnauthorized)
}
