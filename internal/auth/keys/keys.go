// Package keys is the API key service: it makes, lists and revokes keys,
// keeps them in the store hashed, and authenticates a presented key against
// them (auth.Authenticator). The bootstrap admin token keeps working beside
// the keys it makes.
//
// A key reads "sbx_<id>_<secret>": id (16 hex digits) finds the record, the
// secret (32 random bytes, base64url) proves possession. Only the secret's
// SHA-256 is stored. A fast hash is right here, unlike for passwords: the
// secret has 256 bits of entropy, so no amount of guessing per second finds
// it, and a slow hash (bcrypt, argon2) would only add tens of milliseconds
// of CPU to every request — a cost for users and a lever for attackers.
//
// Every key is held in memory (a host has few), so authenticating costs a
// map lookup, one SHA-256 and a constant-time compare, and revocation takes
// effect on the next request. The last-used time is kept in memory and
// written to the store at most once per flush interval, not per request.
package keys

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Prefix starts every key the service makes.
const Prefix = "sbx_"

// Scopes are the scopes a key may hold.
var Scopes = wire.Scopes()

// flushEvery is how often last-used times reach the store.
const flushEvery = 30 * time.Second

// Service is the key service. It is an auth.Authenticator.
type Service struct {
	store store.KeyStore
	admin auth.AdminToken

	mu   sync.RWMutex
	byID map[string]*entry

	stop chan struct{}
	done chan struct{}
}

type entry struct {
	rec      store.Key
	p        auth.Principal // made once here, not per request
	lastUsed atomic.Int64   // unix nanoseconds; 0: never
	flushed  atomic.Int64   // lastUsed as last written
}

var (
	_ auth.Authenticator = (*Service)(nil)
	_ auth.KeyLookup     = (*Service)(nil)
)

// New loads the keys of st and starts writing last-used times back.
// Close stops it.
func New(ctx context.Context, st store.KeyStore, admin auth.AdminToken) (*Service, error) {
	recs, err := st.ListKeys(ctx)
	if err != nil {
		return nil, err
	}
	s := &Service{store: st, admin: admin, byID: map[string]*entry{}, stop: make(chan struct{}), done: make(chan struct{})}
	for _, r := range recs {
		s.byID[r.ID] = newEntry(*r)
	}
	go s.flushLoop()
	return s, nil
}

func newEntry(r store.Key) *entry {
	e := &entry{rec: r, p: principal(r)}
	if !r.LastUsedAt.IsZero() {
		e.lastUsed.Store(r.LastUsedAt.UnixNano())
		e.flushed.Store(r.LastUsedAt.UnixNano())
	}
	return e
}

// Authenticate returns the principal of key: one the service made, or the
// admin token.
func (s *Service) Authenticate(ctx context.Context, key string) (auth.Principal, error) {
	// The admin token reads "sbx_<hex>", with no second underscore.
	rest, ok := strings.CutPrefix(key, Prefix)
	id, secret, isKey := strings.Cut(rest, "_")
	if !ok || !isKey {
		return s.admin.Authenticate(ctx, key)
	}
	s.mu.RLock()
	e := s.byID[id]
	s.mu.RUnlock()
	if e == nil {
		return auth.Principal{}, wrongKey()
	}
	sum := sha256.Sum256([]byte(secret))
	if subtle.ConstantTimeCompare(sum[:], e.rec.SecretSHA256) != 1 {
		return auth.Principal{}, wrongKey()
	}
	return e.use(time.Now())
}

// use returns e's principal if the key is neither revoked nor expired at
// now, and marks it used.
func (e *entry) use(now time.Time) (auth.Principal, error) {
	if !e.rec.RevokedAt.IsZero() {
		return auth.Principal{}, errdefs.Unauthorized(wire.CodeUnauthorized, "API key %s was revoked", e.rec.ID)
	}
	if !e.rec.ExpiresAt.IsZero() && !now.Before(e.rec.ExpiresAt) {
		return auth.Principal{}, errdefs.Unauthorized(wire.CodeUnauthorized, "API key %s expired at %s", e.rec.ID, e.rec.ExpiresAt.Format(time.RFC3339))
	}
	e.lastUsed.Store(now.UnixNano())
	return e.p, nil
}

// LookupKey returns the principal of key id for a credential derived from
// it (auth.KeyLookup): refused once the key is revoked or expired.
func (s *Service) LookupKey(ctx context.Context, id string) (auth.Principal, error) {
	if id == auth.Admin.KeyID {
		return s.admin.LookupKey(ctx, id)
	}
	s.mu.RLock()
	e := s.byID[id]
	s.mu.RUnlock()
	if e == nil {
		return auth.Principal{}, errdefs.Unauthorized(wire.CodeUnauthorized, "unknown API key %s", id)
	}
	return e.use(time.Now())
}

func wrongKey() error { return errdefs.Unauthorized(wire.CodeUnauthorized, "wrong API key") }

func principal(r store.Key) auth.Principal {
	p := auth.Principal{KeyID: r.ID, Team: r.Team}
	for _, sc := range r.Scopes {
		p.Scopes = append(p.Scopes, auth.Scope(sc))
	}
	p.Scopes = slices.Clip(p.Scopes) // shared by every request: an append copies
	return p
}

// Create makes a key and returns it with its secret, which is not kept.
// The team defaults to the caller's.
func (s *Service) Create(ctx context.Context, req wire.CreateKeyRequest) (wire.CreatedKey, error) {
	if len(req.Scopes) == 0 {
		return wire.CreatedKey{}, errdefs.Invalid(wire.CodeInvalidKey, "a key needs at least one scope: %s", strings.Join(Scopes, ", "))
	}
	for _, sc := range req.Scopes {
		if !slices.Contains(Scopes, sc) {
			return wire.CreatedKey{}, errdefs.Invalid(wire.CodeInvalidKey, "unknown scope %q; scopes are %s", sc, strings.Join(Scopes, ", "))
		}
	}
	if req.TTLSeconds < 0 {
		return wire.CreatedKey{}, errdefs.Invalid(wire.CodeInvalidKey, "ttlSeconds must be 0 (never expires) or more, not %d", req.TTLSeconds)
	}
	if len(req.Name) > 200 {
		return wire.CreatedKey{}, errdefs.Invalid(wire.CodeInvalidKey, "a key name has at most 200 bytes")
	}
	team := req.Team
	if team == "" {
		p, _ := auth.FromContext(ctx)
		team = p.Team
	}
	if team == "" {
		team = auth.DefaultTeam
	}
	idb, secretb := make([]byte, 8), make([]byte, 32)
	rand.Read(idb)
	rand.Read(secretb)
	id, secret := hex.EncodeToString(idb), base64.RawURLEncoding.EncodeToString(secretb)
	sum := sha256.Sum256([]byte(secret))
	rec := store.Key{ID: id, Name: req.Name, Team: team, Scopes: slices.Clone(req.Scopes), SecretSHA256: sum[:],
		CreatedAt: time.Now().UTC().Round(0)}
	if req.TTLSeconds > 0 {
		rec.ExpiresAt = rec.CreatedAt.Add(time.Duration(req.TTLSeconds) * time.Second)
	}
	if err := s.store.CreateKey(ctx, &rec); err != nil {
		return wire.CreatedKey{}, err
	}
	e := newEntry(rec)
	s.mu.Lock()
	s.byID[id] = e
	s.mu.Unlock()
	return wire.CreatedKey{APIKey: describe(e), Key: Prefix + id + "_" + secret}, nil
}

// List describes the keys of team, or of every team for team "".
func (s *Service) List(team string) []wire.APIKey {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []wire.APIKey{}
	for _, e := range s.byID {
		if team == "" || e.rec.Team == team {
			out = append(out, describe(e))
		}
	}
	slices.SortFunc(out, func(a, b wire.APIKey) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// Revoke revokes key id at once; revoking twice is no error.
func (s *Service) Revoke(ctx context.Context, id string) (wire.APIKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.byID[id]
	if e == nil {
		return wire.APIKey{}, errdefs.NotFound(wire.CodeKeyNotFound, "key %q not found; list keys with \"sbx key ls\"", id)
	}
	if e.rec.RevokedAt.IsZero() {
		t := time.Now().UTC().Round(0)
		if err := s.store.RevokeKey(ctx, id, t); err != nil {
			return wire.APIKey{}, err
		}
		// A new entry, not a write to the old one: Authenticate reads
		// entries without the lock.
		r := e.rec
		r.RevokedAt = t
		ne := newEntry(r)
		ne.lastUsed.Store(e.lastUsed.Load())
		ne.flushed.Store(e.flushed.Load())
		s.byID[id] = ne
		e = ne
	}
	return describe(e), nil
}

func describe(e *entry) wire.APIKey {
	k := wire.APIKey{ID: e.rec.ID, Name: e.rec.Name, Team: e.rec.Team, Scopes: slices.Clone(e.rec.Scopes), CreatedAt: e.rec.CreatedAt}
	if t := e.rec.ExpiresAt; !t.IsZero() {
		k.ExpiresAt = &t
	}
	if t := e.rec.RevokedAt; !t.IsZero() {
		k.RevokedAt = &t
	}
	if n := e.lastUsed.Load(); n != 0 {
		t := time.Unix(0, n).UTC()
		k.LastUsedAt = &t
	}
	return k
}

func (s *Service) flushLoop() {
	defer close(s.done)
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			s.Flush(context.Background())
		case <-s.stop:
			s.Flush(context.Background())
			return
		}
	}
}

// Flush writes the last-used times that changed since the last flush.
func (s *Service) Flush(ctx context.Context) {
	used := map[string]time.Time{}
	var flushed []*entry
	s.mu.RLock()
	for id, e := range s.byID {
		if n := e.lastUsed.Load(); n != e.flushed.Load() {
			used[id] = time.Unix(0, n).UTC()
			flushed = append(flushed, e)
		}
	}
	s.mu.RUnlock()
	if err := s.store.SetKeysUsed(ctx, used); err != nil {
		slog.Warn("record when API keys were last used", "err", err)
		return
	}
	for _, e := range flushed {
		e.flushed.Store(used[e.rec.ID].UnixNano())
	}
}

// Close writes the last-used times and stops.
func (s *Service) Close() {
	close(s.stop)
	<-s.done
}
