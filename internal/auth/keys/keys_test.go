package keys

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

func newService(t *testing.T) (*Service, *store.SQLite, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sbx.db")
	st, err := store.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := New(context.Background(), st, auth.AdminToken("sbx_0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close(); st.Close() })
	return svc, st, path
}

func TestKeyLifecycle(t *testing.T) {
	svc, st, _ := newService(t)
	ctx := context.Background()
	if p, err := svc.Authenticate(ctx, "sbx_0123456789abcdef"); err != nil || p.KeyID != "admin" {
		t.Fatalf("bootstrap admin key: %+v %v", p, err)
	}
	k, err := svc.Create(ctx, wire.CreateKeyRequest{Name: "ci", Scopes: []string{wire.ScopeSandboxesRead}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(k.Key, Prefix+k.ID+"_") || k.Team != auth.DefaultTeam {
		t.Fatalf("key %q of team %q", k.Key, k.Team)
	}
	p, err := svc.Authenticate(ctx, k.Key)
	if err != nil || p.KeyID != k.ID || p.Team != auth.DefaultTeam || !p.Has(auth.ScopeSandboxesRead) || p.Has(auth.ScopeExec) {
		t.Fatalf("principal %+v, err %v", p, err)
	}
	// A wrong secret with the right id, and a flipped last character.
	for _, bad := range []string{Prefix + k.ID + "_wrong", k.Key[:len(k.Key)-1] + "x", Prefix + "nokey_x", ""} {
		if _, err := svc.Authenticate(ctx, bad); !errdefs.Is(err, errdefs.KindUnauthorized) {
			t.Fatalf("key %q: err %v, want unauthorized", bad, err)
		}
	}
	// Last use reaches the store on a flush, not on each request.
	svc.Flush(ctx)
	recs, err := st.ListKeys(ctx)
	if err != nil || len(recs) != 1 || recs[0].LastUsedAt.IsZero() {
		t.Fatalf("stored keys %+v, %v: want one with a last-used time", recs, err)
	}
	if _, err := svc.Revoke(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Authenticate(ctx, k.Key); !errdefs.Is(err, errdefs.KindUnauthorized) {
		t.Fatalf("revoked key still works: %v", err)
	}
	// A new service reads the revocation from the store.
	svc2, err := New(ctx, st, auth.AdminToken("sbx_0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	defer svc2.Close()
	if _, err := svc2.Authenticate(ctx, k.Key); !errdefs.Is(err, errdefs.KindUnauthorized) {
		t.Fatalf("revoked key works after a restart: %v", err)
	}
	if l := svc2.List(""); len(l) != 1 || l[0].RevokedAt == nil {
		t.Fatalf("list after restart: %+v", l)
	}
}

func TestExpiredKeyRefused(t *testing.T) {
	svc, _, _ := newService(t)
	ctx := context.Background()
	k, err := svc.Create(ctx, wire.CreateKeyRequest{Scopes: []string{wire.ScopeExec}, TTLSeconds: 3600})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Authenticate(ctx, k.Key); err != nil {
		t.Fatalf("fresh key: %v", err)
	}
	// Move its expiry into the past, as an hour passing would.
	svc.mu.Lock()
	svc.byID[k.ID].rec.ExpiresAt = time.Now().Add(-time.Second)
	svc.mu.Unlock()
	if _, err := svc.Authenticate(ctx, k.Key); !errdefs.Is(err, errdefs.KindUnauthorized) || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("expired key: %v", err)
	}
}

func TestCreateRefusesBadInput(t *testing.T) {
	svc, _, _ := newService(t)
	ctx := context.Background()
	for _, req := range []wire.CreateKeyRequest{
		{},                         // no scope
		{Scopes: []string{"root"}}, // unknown scope
		{Scopes: []string{"exec"}, TTLSeconds: -1},
		{Scopes: []string{"exec"}, Team: "nosuchteam"},
	} {
		if _, err := svc.Create(ctx, req); err == nil {
			t.Errorf("%+v: created", req)
		}
	}
	if l := svc.List(""); len(l) != 0 {
		t.Fatalf("refused creates left keys: %+v", l)
	}
}

// TestSecretNotInDatabase reads the database files byte by byte: the
// secret of a key, in any encoding, is nowhere in them.
func TestSecretNotInDatabase(t *testing.T) {
	svc, st, path := newService(t)
	ctx := context.Background()
	var secrets [][]byte
	for range 3 {
		k, err := svc.Create(ctx, wire.CreateKeyRequest{Scopes: []string{wire.ScopeAdmin}})
		if err != nil {
			t.Fatal(err)
		}
		secret := strings.TrimPrefix(k.Key, Prefix+k.ID+"_")
		raw, err := base64.RawURLEncoding.DecodeString(secret)
		if err != nil || len(raw) != 32 {
			t.Fatalf("secret %q is not 32 bytes of base64url: %v", secret, err)
		}
		secrets = append(secrets, []byte(secret), raw, []byte(k.Key))
		if _, err := svc.Authenticate(ctx, k.Key); err != nil {
			t.Fatal(err)
		}
	}
	svc.Flush(ctx)
	st.Close() // checkpoints the WAL into the file
	var all []byte
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	if len(all) == 0 {
		t.Fatal("read no database bytes")
	}
	for _, s := range secrets {
		if bytes.Contains(all, s) {
			t.Fatalf("the database holds a key secret (%d bytes)", len(s))
		}
	}
}

// A credential derived from a key looks the key up by id at each use:
// refused once the key is revoked or expired, and for an unknown id.
func TestLookupKeyFollowsRevocationAndExpiry(t *testing.T) {
	svc, _, _ := newService(t)
	ctx := context.Background()
	if p, err := svc.LookupKey(ctx, auth.Admin.KeyID); err != nil || !p.AllTeams() {
		t.Fatalf("admin: %+v %v", p, err)
	}
	k, err := svc.Create(ctx, wire.CreateKeyRequest{Scopes: []string{wire.ScopeExec}})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := svc.LookupKey(ctx, k.ID); err != nil || p.KeyID != k.ID || !p.Has(auth.ScopeExec) {
		t.Fatalf("live key: %+v %v", p, err)
	}
	if _, err := svc.Revoke(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.LookupKey(ctx, k.ID); !errdefs.Is(err, errdefs.KindUnauthorized) {
		t.Fatalf("revoked key: %v", err)
	}
	e, err := svc.Create(ctx, wire.CreateKeyRequest{Scopes: []string{wire.ScopeExec}, TTLSeconds: 60})
	if err != nil {
		t.Fatal(err)
	}
	svc.mu.Lock()
	svc.byID[e.ID].rec.ExpiresAt = time.Now().Add(-time.Second)
	svc.mu.Unlock()
	if _, err := svc.LookupKey(ctx, e.ID); !errdefs.Is(err, errdefs.KindUnauthorized) {
		t.Fatalf("expired key: %v", err)
	}
	if _, err := svc.LookupKey(ctx, "0123456789abcdef"); !errdefs.Is(err, errdefs.KindUnauthorized) {
		t.Fatalf("unknown key: %v", err)
	}
}
