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
