// Package secret keeps the teams' secrets: values the HTTP egress proxy
// adds to a sandbox's requests (inject rules) without the sandbox ever
// seeing them.
//
// Values are sealed with AES-256-GCM before they reach the store, with
// the team and name as additional data (a sealed value copied to another
// row does not open). The key is a file of its own, 0600 in the data
// dir, never in the store: a copy of the database alone reveals nothing.
// Values are never logged and never returned by the API; only the proxy
// opens them (Value).
package secret

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpegress"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// MaxValue bounds a secret's value.
const MaxValue = 16 << 10

// KeyFile is the key's file name in the data dir.
const KeyFile = "secrets.key"

// Keeper seals, stores and opens secrets.
type Keeper struct {
	store  store.SecretStore
	sealer *Sealer
}

// Open returns a Keeper over st with the key in dataDir, made on first use.
func Open(dataDir string, st store.SecretStore) (*Keeper, error) {
	s, err := NewSealer(dataDir)
	if err != nil {
		return nil, err
	}
	return &Keeper{store: st, sealer: s}, nil
}

// Sealer seals other values at rest with the same key (store.Sealer): the
// store seals bucket mounts' keys with it.
type Sealer struct{ aead cipher.AEAD }

// NewSealer returns the Sealer of the key in dataDir, made on first use.
func NewSealer(dataDir string) (*Sealer, error) {
	key, err := loadKey(filepath.Join(dataDir, KeyFile))
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead}, nil
}

// Seal seals plain bound to ad: nonce, then ciphertext.
func (s *Sealer) Seal(plain, ad []byte) []byte {
	nonce := make([]byte, s.aead.NonceSize())
	rand.Read(nonce)
	return s.aead.Seal(nonce, nonce, plain, ad)
}

// Open opens what Seal sealed with the same ad.
func (s *Sealer) Open(sealed, ad []byte) ([]byte, error) {
	ns := s.aead.NonceSize()
	if len(sealed) < ns {
		return nil, errors.New("sealed value too short")
	}
	return s.aead.Open(nil, sealed[:ns], sealed[ns:], ad)
}

func loadKey(path string) ([]byte, error) {
	key, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		key = make([]byte, 32)
		rand.Read(key)
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, key, 0o600); err != nil {
			return nil, fmt.Errorf("write the secrets key: %w", err)
		}
		return key, os.Rename(tmp, path)
	}
	if err != nil {
		return nil, fmt.Errorf("read the secrets key: %w", err)
	}
	if len(key) != 32 {
		return nil, fmt.Errorf("the secrets key %s is %d bytes, want 32", path, len(key))
	}
	return key, nil
}

func additional(team, name string) []byte { return []byte(team + "\x00" + name) }

// Create seals req's value and stores it in ctx's team, replacing a secret
// of the same name.
func (k *Keeper) Create(ctx context.Context, req wire.CreateSecretRequest) (*wire.SecretInfo, error) {
	name, value := req.Name, req.Value
	if err := httpegress.CheckSecretName(name); err != nil {
		return nil, err
	}
	if value == "" || len(value) > MaxValue {
		return nil, errdefs.Invalid(wire.CodeInvalidSecret, "secret %q: the value must be 1 to %d bytes", name, MaxValue)
	}
	hosts, err := httpegress.ParseSecretHosts(name, req.Hosts)
	if err != nil {
		return nil, err
	}
	// The team is decided here, once, and stored as sealed: the store does
	// not derive it again, so the row and the sealing cannot disagree.
	sec := &store.Secret{Team: auth.TeamOf(ctx), Name: name, Size: len(value), Hosts: hosts, AllowHTTP: req.AllowHTTP}
	sec.Sealed = k.sealer.Seal([]byte(value), additional(sec.Team, name))
	if err := k.store.PutSecret(ctx, sec); err != nil {
		return nil, err
	}
	return info(*sec), nil
}

// List returns the metadata of ctx's team's secrets.
func (k *Keeper) List(ctx context.Context) ([]wire.SecretInfo, error) {
	all, err := k.store.ListSecrets(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]wire.SecretInfo, 0, len(all))
	for _, s := range all {
		out = append(out, *info(s))
	}
	return out, nil
}

// SetHosts replaces where a secret of ctx's team may be sent.
func (k *Keeper) SetHosts(ctx context.Context, name string, h wire.SecretHosts) (*wire.SecretInfo, error) {
	if err := httpegress.CheckSecretName(name); err != nil {
		return nil, err
	}
	hosts, err := httpegress.ParseSecretHosts(name, h.Hosts)
	if err != nil {
		return nil, err
	}
	team := auth.TeamOf(ctx)
	if err := k.store.SetSecretHosts(ctx, team, name, hosts, h.AllowHTTP); err != nil {
		return nil, err
	}
	sec, err := k.store.GetSecret(ctx, team, name)
	if err != nil {
		return nil, err
	}
	return info(*sec), nil
}

// Hosts is where team's secret name may be sent (for checking rules).
func (k *Keeper) Hosts(ctx context.Context, team, name string) (httpegress.SecretValue, error) {
	sec, err := k.store.GetSecret(ctx, team, name)
	if err != nil {
		return httpegress.SecretValue{}, err
	}
	return httpegress.SecretValue{Hosts: sec.Hosts, AllowHTTP: sec.AllowHTTP}, nil
}

// Delete removes a secret of ctx's team.
func (k *Keeper) Delete(ctx context.Context, name string) error {
	return k.store.DeleteSecret(ctx, name)
}

// Open opens team's secret name: for the egress proxy only. Its errors
// say why (never with the value), for the proxy's log.
func (k *Keeper) Open(ctx context.Context, team, name string) (httpegress.SecretValue, error) {
	if team == "" {
		team = auth.DefaultTeam // a sandbox record without a team belongs to it (auth.Sees)
	}
	sec, err := k.store.GetSecret(ctx, team, name)
	if err != nil {
		return httpegress.SecretValue{}, err
	}
	plain, err := k.sealer.Open(sec.Sealed, additional(sec.Team, name))
	if err != nil {
		return httpegress.SecretValue{}, errdefs.Internal(nil, "secret %q of team %s does not open with this daemon's key (%s)", name, team, KeyFile)
	}
	return httpegress.SecretValue{Value: string(plain), Hosts: sec.Hosts, AllowHTTP: sec.AllowHTTP}, nil
}

func info(s store.Secret) *wire.SecretInfo {
	hosts := s.Hosts
	if hosts == nil {
		hosts = []string{}
	}
	return &wire.SecretInfo{Name: s.Name, Team: s.Team, Size: s.Size, CreatedAt: s.CreatedAt, SecretHosts: wire.SecretHosts{Hosts: hosts, AllowHTTP: s.AllowHTTP}}
}
