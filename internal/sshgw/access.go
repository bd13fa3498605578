package sshgw

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Access tokens follow Daytona's scheme: a high-entropy secret that the SSH
// client sends as its user name (ssh TOKEN@host). The store keeps only its
// sha256, so a leaked database grants nothing; a token is 32 random bytes,
// which makes a fast hash as safe as a slow one. Lookups go by the hash and
// the hash is compared again in constant time, so neither the index nor the
// comparison leaks how close a guess was.

// Access lifetimes: a token lasts an hour unless asked otherwise, a public
// key the longest allowed (it has no secret to rotate, so it must still end).
const (
	DefaultTTL    = time.Hour
	MaxTTL        = 30 * 24 * time.Hour
	DefaultKeyTTL = MaxTTL
)

// tokenPrefix marks an sbx SSH token (as "sbx_" marks an API key), so a
// user name that is not one is refused without a store lookup.
const tokenPrefix = "sbxssh"

// Access manages SSH access records: tokens and public keys. Each names
// the API key that made it; a login asks keys whether that key still
// stands, so revoking or expiring the key ends its accesses at once.
type Access struct {
	store store.SSHAccessStore
	keys  auth.KeyLookup
	now   func() time.Time

	mu      sync.Mutex
	revoked chan struct{} // closed and replaced at each revocation
}

// NewAccess returns the token logic over st, checking the API keys that
// made accesses with keys.
func NewAccess(st store.SSHAccessStore, keys auth.KeyLookup) *Access {
	return &Access{store: st, keys: keys, now: func() time.Time { return time.Now().UTC() }, revoked: make(chan struct{})}
}

// Changed is closed at the next revocation; open connections then check
// whether they may stay.
func (a *Access) Changed() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.revoked
}

// Grant is what a successful check lets in: the sandbox and whom to act
// for.
type Grant struct {
	AccessID  string
	SandboxID string
	Principal auth.Principal
}

// Create makes an access for sandboxID on behalf of p. With a public key it
// registers the key (token ""); otherwise it returns a new token, shown
// only now.
func (a *Access) Create(ctx context.Context, sandboxID string, p auth.Principal, req wire.CreateSSHAccessRequest) (*store.SSHAccess, string, error) {
	if req.ExpiresInSeconds < 0 || time.Duration(req.ExpiresInSeconds)*time.Second > MaxTTL {
		return nil, "", errdefs.Invalid(wire.CodeInvalidExpiry, "expiresInSeconds must be from 1 to %d (30 days), got %d", int64(MaxTTL/time.Second), req.ExpiresInSeconds)
	}
	rec := &store.SSHAccess{ID: "ssh-" + randomHex(8), SandboxID: sandboxID, Team: p.Team, CreatedBy: p.KeyID, CreatedAt: a.now().Round(0)}
	for _, s := range p.Scopes {
		rec.Scopes = append(rec.Scopes, string(s))
	}
	ttl := time.Duration(req.ExpiresInSeconds) * time.Second
	token := ""
	if req.PublicKey != "" {
		key, _, _, _, err := ssh.ParseAuthorizedKey([]byte(req.PublicKey))
		if err != nil {
			return nil, "", errdefs.Invalid(wire.CodeInvalidPublicKey, "publicKey must be one line of authorized_keys form, such as \"ssh-ed25519 AAAA… me@laptop\": %v", err)
		}
		rec.PublicKey = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key)))
		if ttl == 0 {
			ttl = DefaultKeyTTL
		}
	} else {
		token = tokenPrefix + randomHex(32)
		rec.TokenHash = hashToken(token)
		if ttl == 0 {
			ttl = DefaultTTL
		}
	}
	if ttl > 0 {
		rec.ExpiresAt = rec.CreatedAt.Add(ttl)
	}
	a.store.DeleteExpiredSSHAccess(ctx, rec.CreatedAt.Add(-expiredKept))
	if err := a.store.CreateSSHAccess(ctx, rec); err != nil {
		return nil, "", err
	}
	return rec, token, nil
}

// errDenied is every refusal: the client learns nothing about why.
var errDenied = errdefs.Unauthorized(wire.CodeUnauthorized, "SSH access denied")

// CheckToken returns the grant of a token, refusing unknown, revoked and
// expired ones alike.
func (a *Access) CheckToken(ctx context.Context, token string) (Grant, error) {
	if !strings.HasPrefix(token, tokenPrefix) || len(token) != len(tokenPrefix)+64 {
		return Grant{}, errDenied
	}
	h := hashToken(token)
	rec, err := a.store.SSHAccessByTokenHash(ctx, h)
	if err != nil {
		return Grant{}, errDenied
	}
	if subtle.ConstantTimeCompare([]byte(rec.TokenHash), []byte(h)) != 1 || a.expired(rec) {
		return Grant{}, errDenied
	}
	return a.grantOf(ctx, rec)
}

// CheckKey returns the grant of a public key registered on sandboxID.
func (a *Access) CheckKey(ctx context.Context, sandboxID string, key ssh.PublicKey) (Grant, error) {
	recs, err := a.store.ListSSHAccess(ctx, sandboxID)
	if err != nil {
		return Grant{}, errDenied
	}
	want := key.Marshal()
	for _, rec := range recs {
		if rec.PublicKey == "" || a.expired(&rec) {
			continue
		}
		k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(rec.PublicKey))
		if err == nil && subtle.ConstantTimeCompare(k.Marshal(), want) == 1 {
			return a.grantOf(ctx, &rec)
		}
	}
	return Grant{}, errDenied
}

// Still reports whether the access behind g and its API key still stand;
// open connections are closed once either is revoked. Expiry ends logins,
// not the sessions they opened (as a password change does not end an sshd
// session).
func (a *Access) Still(ctx context.Context, g Grant) bool {
	if _, err := a.keys.LookupKey(ctx, g.Principal.KeyID); errdefs.Is(err, errdefs.KindUnauthorized) {
		return false
	}
	recs, err := a.store.ListSSHAccess(ctx, g.SandboxID)
	if err != nil {
		return true // a store hiccup does not cut sessions
	}
	for _, rec := range recs {
		if rec.ID == g.AccessID {
			return true
		}
	}
	return false
}

func (a *Access) expired(rec *store.SSHAccess) bool {
	return !rec.ExpiresAt.IsZero() && !a.now().Before(rec.ExpiresAt)
}

// grantOf is what rec lets in: its creating key's principal, while that
// key is neither revoked nor expired and still of rec's team.
func (a *Access) grantOf(ctx context.Context, rec *store.SSHAccess) (Grant, error) {
	p, err := a.keys.LookupKey(ctx, rec.CreatedBy)
	if err != nil || p.Team != rec.Team {
		return Grant{}, errDenied
	}
	return Grant{AccessID: rec.ID, SandboxID: rec.SandboxID, Principal: p}, nil
}

// List returns a sandbox's accesses, expired ones included (for a day).
func (a *Access) List(ctx context.Context, sandboxID string) ([]store.SSHAccess, error) {
	return a.store.ListSSHAccess(ctx, sandboxID)
}

// expiredKept is how long an expired access stays listed before a new
// one sweeps it away.
const expiredKept = 24 * time.Hour

// Revoke removes access id of a sandbox.
func (a *Access) Revoke(ctx context.Context, sandboxID, id string) error {
	if err := a.store.DeleteSSHAccess(ctx, sandboxID, id); err != nil {
		return err
	}
	a.mu.Lock()
	close(a.revoked)
	a.revoked = make(chan struct{})
	a.mu.Unlock()
	return nil
}

// ToAPI is the API's view of rec (without the token, which is not kept).
func ToAPI(rec *store.SSHAccess) wire.SSHAccess {
	out := wire.SSHAccess{ID: rec.ID, SandboxID: rec.SandboxID, PublicKey: rec.PublicKey, CreatedAt: rec.CreatedAt}
	if !rec.ExpiresAt.IsZero() {
		t := rec.ExpiresAt
		out.ExpiresAt = &t
	}
	if k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(rec.PublicKey)); err == nil {
		out.Fingerprint = ssh.FingerprintSHA256(k)
	}
	return out
}

func hashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
