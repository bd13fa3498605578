package auth

import (
	"context"
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/sdk"
)

func TestRequireScopes(t *testing.T) {
	keys := fakeKeys{"rw": {KeyID: "k1", Team: "t", Scopes: []Scope{"sandboxes:write", "exec"}}, "ro": {KeyID: "k2", Team: "t", Scopes: []Scope{"sandboxes:read"}}, "admin": Admin}
	need := RequireScopes(keys, "sandboxes:write", "exec")
	for key, ok := range map[string]bool{"rw": true, "admin": true, "ro": false, "nope": false} {
		p, err := need.Authenticate(context.Background(), key)
		if (err == nil) != ok {
			t.Errorf("key %s: err %v, want accepted=%v", key, err, ok)
		}
		if ok && p.KeyID == "" {
			t.Errorf("key %s: no principal", key)
		}
	}
}

type fakeKeys map[string]Principal

func (f fakeKeys) Authenticate(_ context.Context, key string) (Principal, error) {
	if p, ok := f[key]; ok {
		return p, nil
	}
	return Principal{}, errdefs.Unauthorized(sdk.CodeUnauthorized, "wrong API key")
}

// TestSeesFailsClosed: a context with neither a principal nor a system
// scope sees no team's objects; the named system scope sees all; a
// principal added on top of a system scope decides again.
func TestSeesFailsClosed(t *testing.T) {
	bg := context.Background()
	if Sees(bg, "a") || Sees(bg, "") {
		t.Fatal("a context without a principal sees objects")
	}
	sys := System(WithPrincipal(bg, Principal{KeyID: "k", Team: "a"}), "test")
	if !Sees(sys, "a") || !Sees(sys, "b") {
		t.Fatal("the system scope does not see every team")
	}
	if r, ok := SystemReason(sys); !ok || r != "test" {
		t.Fatalf("SystemReason = %q, %v", r, ok)
	}
	if _, ok := FromContext(sys); ok {
		t.Fatal("the system scope kept the principal it replaced")
	}
	team := WithPrincipal(sys, Principal{KeyID: "k", Team: "a"})
	if Sees(team, "b") || !Sees(team, "a") {
		t.Fatal("a principal over a system scope does not decide")
	}
	if _, ok := SystemReason(team); ok {
		t.Fatal("a principal's context reports a system scope")
	}
}
