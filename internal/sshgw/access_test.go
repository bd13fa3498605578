package sshgw

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/auth/keys/keystest"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// memStore is an in-memory SSHAccessStore.
type memStore struct {
	mu   sync.Mutex
	recs []store.SSHAccess
}

func (m *memStore) CreateSSHAccess(_ context.Context, a *store.SSHAccess) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs = append(m.recs, *a)
	return nil
}

func (m *memStore) SSHAccessByTokenHash(_ context.Context, h string) (*store.SSHAccess, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.recs {
		if r.TokenHash == h {
			return &r, nil
		}
	}
	return nil, errdefs.NotFound(wire.CodeSSHAccessNotFound, "none")
}

func (m *memStore) ListSSHAccess(_ context.Context, sb string) ([]store.SSHAccess, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []store.SSHAccess
	for _, r := range m.recs {
		if r.SandboxID == sb {
			out = append(out, r)
		}
	}
	return out, nil
}

func (m *memStore) DeleteSSHAccess(_ context.Context, sb, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, r := range m.recs {
		if r.SandboxID == sb && r.ID == id {
			m.recs = append(m.recs[:i], m.recs[i+1:]...)
			return nil
		}
	}
	return errdefs.NotFound(wire.CodeSSHAccessNotFound, "none")
}

func (m *memStore) DeleteExpiredSSHAccess(_ context.Context, t time.Time) (int64, error) {
	return 0, nil
}

func newTestAccess() (*Access, *memStore, *time.Time) {
	st := &memStore{}
	a := NewAccess(st, aliceKeys{})
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a.now = func() time.Time { return now }
	return a, st, &now
}

var alice = auth.Principal{KeyID: "key-alice", Team: "team-a", Scopes: []auth.Scope{"sandboxes:write"}}

// aliceKeys knows alice's key only.
type aliceKeys struct{}

func (aliceKeys) LookupKey(_ context.Context, id string) (auth.Principal, error) {
	if id != alice.KeyID {
		return auth.Principal{}, errdefs.Unauthorized(wire.CodeUnauthorized, "unknown key")
	}
	return alice, nil
}

func TestTokenGrantsItsSandboxForItsCreator(t *testing.T) {
	a, st, _ := newTestAccess()
	ctx := context.Background()
	rec, token, err := a.Create(ctx, "sbx-1", alice, wire.CreateSSHAccessRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(token, tokenPrefix) || len(token) != len(tokenPrefix)+64 {
		t.Fatalf("token %q", token)
	}
	stored := st.recs[0]
	if stored.TokenHash == token || strings.Contains(stored.TokenHash, token[len(tokenPrefix):]) || stored.TokenHash != hashToken(token) {
		t.Fatalf("stored %+v: want only the token's sha256", stored)
	}
	if got := rec.ExpiresAt.Sub(rec.CreatedAt); got != DefaultTTL {
		t.Fatalf("default lifetime %s, want %s", got, DefaultTTL)
	}
	g, err := a.CheckToken(ctx, token)
	if err != nil || g.SandboxID != "sbx-1" || g.Principal.Team != "team-a" || g.Principal.KeyID != "key-alice" || g.AccessID != rec.ID ||
		!g.Principal.Has("sandboxes:write") || g.Principal.Has(auth.ScopeAdmin) {
		t.Fatalf("grant %+v, %v", g, err)
	}
	_, other, _ := a.Create(ctx, "sbx-2", alice, wire.CreateSSHAccessRequest{})
	if g, _ := a.CheckToken(ctx, other); g.SandboxID != "sbx-2" {
		t.Fatalf("second token opens %s", g.SandboxID)
	}
}

func TestTokensRefused(t *testing.T) {
	a, _, now := newTestAccess()
	ctx := context.Background()
	rec, token, _ := a.Create(ctx, "sbx-1", alice, wire.CreateSSHAccessRequest{ExpiresInSeconds: 60})
	flipped := token[:len(token)-1] + "0"
	if strings.HasSuffix(token, "0") {
		flipped = token[:len(token)-1] + "1"
	}
	for name, bad := range map[string]string{
		"empty": "", "user name": "root", "prefix only": tokenPrefix, "one character off": flipped,
		"too long": token + "0", "uppercase": strings.ToUpper(token),
	} {
		if _, err := a.CheckToken(ctx, bad); errdefs.KindOf(err) != errdefs.KindUnauthorized {
			t.Errorf("%s: %v, want unauthorized", name, err)
		}
	}
	*now = now.Add(59 * time.Second)
	if _, err := a.CheckToken(ctx, token); err != nil {
		t.Fatalf("before expiry: %v", err)
	}
	*now = now.Add(time.Second)
	if _, err := a.CheckToken(ctx, token); err == nil {
		t.Fatal("an expired token was let in")
	}
	// Expiry ends logins, not open sessions; revoking ends both.
	g, _ := a.grantOf(ctx, rec)
	if !a.Still(ctx, g) {
		t.Fatal("an expired but unrevoked access should keep its open sessions")
	}
	changed := a.Changed()
	if err := a.Revoke(ctx, "sbx-1", rec.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	default:
		t.Fatal("revoking did not signal open connections")
	}
	if a.Still(ctx, g) {
		t.Fatal("a revoked access keeps its sessions")
	}
	if err := a.Revoke(ctx, "sbx-1", rec.ID); errdefs.CodeOf(err) != wire.CodeSSHAccessNotFound {
		t.Fatalf("revoke twice: %v", err)
	}
}

func TestCreateRefusesBadInput(t *testing.T) {
	a, st, _ := newTestAccess()
	ctx := context.Background()
	for _, req := range []wire.CreateSSHAccessRequest{
		{ExpiresInSeconds: -1},
		{ExpiresInSeconds: int64(MaxTTL/time.Second) + 1},
		{PublicKey: "ssh-ed25519 not-base64"},
		{PublicKey: "hello"},
	} {
		if _, _, err := a.Create(ctx, "sbx-1", alice, req); errdefs.KindOf(err) != errdefs.KindInvalid {
			t.Errorf("%+v: %v, want invalid", req, err)
		}
	}
	if len(st.recs) != 0 {
		t.Fatalf("bad requests stored %d records", len(st.recs))
	}
}

func TestPublicKeyGrantsOnlyItsSandbox(t *testing.T) {
	a, _, _ := newTestAccess()
	ctx := context.Background()
	key := func() ssh.PublicKey {
		pub, _, _ := ed25519.GenerateKey(rand.Reader)
		k, _ := ssh.NewPublicKey(pub)
		return k
	}
	mine, theirs := key(), key()
	rec, token, err := a.Create(ctx, "sbx-1", alice, wire.CreateSSHAccessRequest{PublicKey: string(ssh.MarshalAuthorizedKey(mine)) + " me@laptop"})
	if err != nil || token != "" || !rec.ExpiresAt.Equal(rec.CreatedAt.Add(DefaultKeyTTL)) {
		t.Fatalf("register key: %+v %q %v, want it to expire after DefaultKeyTTL", rec, token, err)
	}
	if g, err := a.CheckKey(ctx, "sbx-1", mine); err != nil || g.Principal.Team != "team-a" {
		t.Fatalf("registered key: %+v %v", g, err)
	}
	if _, err := a.CheckKey(ctx, "sbx-1", theirs); err == nil {
		t.Fatal("an unregistered key was let in")
	}
	if _, err := a.CheckKey(ctx, "sbx-2", mine); err == nil {
		t.Fatal("a key of sbx-1 opened sbx-2")
	}
	if api := ToAPI(rec); api.Fingerprint != ssh.FingerprintSHA256(mine) || api.ExpiresAt == nil {
		t.Fatalf("API view %+v", api)
	}
}

func TestGrantSurvivesPermissions(t *testing.T) {
	g := Grant{AccessID: "ssh-1", SandboxID: "sbx-1", Principal: alice}
	if got := grantFrom(permissionsOf(g)); got.AccessID != g.AccessID || got.SandboxID != g.SandboxID ||
		got.Principal.Team != alice.Team || got.Principal.KeyID != alice.KeyID || len(got.Principal.Scopes) != 1 || got.Principal.Scopes[0] != alice.Scopes[0] {
		t.Fatalf("grant %+v became %+v", g, got)
	}
}

func TestFailureLimiter(t *testing.T) {
	l := newFailureLimiter(3, time.Second)
	now := time.Unix(1000, 0)
	l.now = func() time.Time { return now }
	for i := 0; i < 3; i++ {
		if !l.Allowed("10.0.0.1") {
			t.Fatalf("blocked after %d failures", i)
		}
		l.Failed("10.0.0.1")
	}
	if l.Allowed("10.0.0.1") {
		t.Fatal("allowed past the burst")
	}
	if !l.Allowed("10.0.0.2") {
		t.Fatal("another address was blocked")
	}
	now = now.Add(time.Second)
	if !l.Allowed("10.0.0.1") {
		t.Fatal("still blocked after a refill")
	}
	l.Failed("10.0.0.1")
	if l.Allowed("10.0.0.1") {
		t.Fatal("one refill allowed two failures")
	}
	now = now.Add(time.Hour)
	l.sweep()
	if len(l.peers) != 0 {
		t.Fatalf("sweep kept %d refilled peers", len(l.peers))
	}
}

// Tokens, public keys and the sessions they opened die with the API key
// that made them.
func TestAccessDiesWithItsKey(t *testing.T) {
	svc := keystest.New(t)
	a := NewAccess(&memStore{}, svc)
	ctx := context.Background()
	p, _ := keystest.Key(t, svc, wire.ScopeSandboxesWrite, wire.ScopeExec)
	_, token, err := a.Create(ctx, "sbx-1", p, wire.CreateSSHAccessRequest{})
	if err != nil {
		t.Fatal(err)
	}
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	key, _ := ssh.NewPublicKey(pub)
	if _, _, err := a.Create(ctx, "sbx-1", p, wire.CreateSSHAccessRequest{PublicKey: string(ssh.MarshalAuthorizedKey(key))}); err != nil {
		t.Fatal(err)
	}
	g, err := a.CheckToken(ctx, token)
	if err != nil || g.Principal.KeyID != p.KeyID {
		t.Fatalf("token of a live key: %+v %v", g, err)
	}
	if _, err := a.CheckKey(ctx, "sbx-1", key); err != nil {
		t.Fatalf("public key of a live key: %v", err)
	}
	keystest.Revoke(t, svc, p)
	if _, err := a.CheckToken(ctx, token); errdefs.KindOf(err) != errdefs.KindUnauthorized {
		t.Fatalf("token of a revoked key: %v", err)
	}
	if _, err := a.CheckKey(ctx, "sbx-1", key); errdefs.KindOf(err) != errdefs.KindUnauthorized {
		t.Fatalf("public key of a revoked key: %v", err)
	}
	if a.Still(ctx, g) {
		t.Fatal("a session of a revoked key may stay")
	}
}
