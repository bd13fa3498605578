// Package keystest gives tests a real key service over a fresh SQLite
// store, for tests of credentials derived from API keys.
package keystest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/auth/keys"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// AdminToken is the bootstrap admin key of the services New makes.
const AdminToken = "sbx_0123456789abcdef"

// New returns a key service closed at the end of t.
func New(t testing.TB) *keys.Service {
	t.Helper()
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "keys.db"))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := keys.New(context.Background(), st, auth.AdminToken(AdminToken))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close(); st.Close() })
	return svc
}

// Key makes a key of team default with scopes and returns its principal
// and secret.
func Key(t testing.TB, svc *keys.Service, scopes ...string) (auth.Principal, string) {
	t.Helper()
	k, err := svc.Create(context.Background(), wire.CreateKeyRequest{Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	p, err := svc.Authenticate(context.Background(), k.Key)
	if err != nil {
		t.Fatal(err)
	}
	return p, k.Key
}

// Revoke revokes the key of p.
func Revoke(t testing.TB, svc *keys.Service, p auth.Principal) {
	t.Helper()
	if _, err := svc.Revoke(context.Background(), p.KeyID); err != nil {
		t.Fatal(err)
	}
}
