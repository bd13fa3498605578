package gateway

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/auth/keys"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/kube/podspec"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// KeysFile is the gateway's teams and API keys in cluster mode: a file of
// Secret sbx-gateway-keys (docs/kubernetes/teams.md), YAML or JSON. The
// Kubernetes API is the only state gateway replicas share, and a Secret is
// how it keeps credentials: every replica reads the same file, an operator
// changes it with kubectl and the replicas pick it up without a restart.
type KeysFile struct {
	// Teams with a quota; a key's team need not be listed (no quota).
	Teams []KeysFileTeam `json:"teams,omitempty"`
	Keys  []KeysFileKey  `json:"keys,omitempty"`
}

// KeysFileTeam is a team's quota, counted over the whole cluster.
type KeysFileTeam struct {
	Name   string      `json:"name"`
	Quotas wire.Quotas `json:"quotas"`
}

// KeysFileKey is one API key: it reads "sbx_<id>_<secret>" and only the
// secret's SHA-256 is kept (what sbx gateway key create prints).
type KeysFileKey struct {
	ID           string    `json:"id"`
	Name         string    `json:"name,omitempty"`
	Team         string    `json:"team"`
	Scopes       []string  `json:"scopes"`
	SecretSHA256 string    `json:"secretSHA256"`
	ExpiresAt    time.Time `json:"expiresAt,omitzero"`
}

// Tenants authenticates the gateway's callers: the admin key, and the
// keys of a KeysFile with their teams' quotas. It reloads the file when
// its contents change (a Secret volume is updated in place).
type Tenants struct {
	admin auth.AdminToken
	file  string
	cur   atomic.Pointer[tenantSet]
	mu    sync.Mutex // serialises reloads
	raw   []byte
}

type tenantSet struct {
	keys   *keys.Service
	quotas map[string]wire.Quotas
}

var (
	_ auth.Authenticator = (*Tenants)(nil)
	_ auth.KeyLookup     = (*Tenants)(nil)
)

// NewTenants reads file ("": the admin key alone).
func NewTenants(ctx context.Context, admin auth.AdminToken, file string) (*Tenants, error) {
	t := &Tenants{admin: admin, file: file}
	if err := t.reload(ctx); err != nil {
		return nil, err
	}
	return t, nil
}

// Watch reloads the file every interval until ctx ends; a file that no
// longer parses keeps the keys of the last good one (and is logged).
func (t *Tenants) Watch(ctx context.Context, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if err := t.reload(ctx); err != nil {
				slog.Error("gateway keys file: keeping the previous keys", "file", t.file, "err", err)
			}
		}
	}
}

func (t *Tenants) reload(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var raw []byte
	if t.file != "" {
		var err error
		if raw, err = os.ReadFile(t.file); err != nil {
			return fmt.Errorf("read the keys file: %w", err)
		}
		if t.cur.Load() != nil && bytes.Equal(raw, t.raw) {
			return nil
		}
	}
	set, err := parseKeysFile(ctx, t.admin, raw)
	if err != nil {
		return fmt.Errorf("keys file %s: %w", t.file, err)
	}
	if old := t.cur.Swap(set); old != nil {
		old.keys.Close()
	}
	t.raw = raw
	slog.Info("gateway keys loaded", "file", t.file, "keys", len(set.keys.List("")), "teams", len(set.quotas))
	return nil
}

// parseKeysFile refuses what it would not honour: unknown fields, a quota
// the gateway does not count, a name that is not a label value.
func parseKeysFile(ctx context.Context, admin auth.AdminToken, raw []byte) (*tenantSet, error) {
	var f KeysFile
	if err := yaml.UnmarshalStrict(raw, &f); err != nil {
		return nil, err
	}
	set := &tenantSet{quotas: map[string]wire.Quotas{}}
	for _, tm := range f.Teams {
		if !podspec.ValidLabelValue(tm.Name) || tm.Name == "" {
			return nil, fmt.Errorf("team name %q: it must be a Kubernetes label value", tm.Name)
		}
		if _, dup := set.quotas[tm.Name]; dup {
			return nil, fmt.Errorf("team %q is listed twice", tm.Name)
		}
		if q := tm.Quotas; q != (wire.Quotas{MaxSandboxes: q.MaxSandboxes}) {
			return nil, fmt.Errorf("team %q: the gateway counts only quotas.maxSandboxes over the cluster; the other quotas are kept per host", tm.Name)
		}
		set.quotas[tm.Name] = tm.Quotas
	}
	st := &keysFileStore{}
	for i, k := range f.Keys {
		sum, err := hex.DecodeString(k.SecretSHA256)
		switch {
		case err != nil || len(sum) != 32:
			return nil, fmt.Errorf("key %d (%q): secretSHA256 must be 64 hex digits", i, k.ID)
		case len(k.ID) != 16 || !isHex(k.ID):
			return nil, fmt.Errorf("key %d: id %q must be 16 hex digits", i, k.ID)
		case !podspec.ValidLabelValue(k.Team) || k.Team == "":
			return nil, fmt.Errorf("key %s: team %q must be a Kubernetes label value", k.ID, k.Team)
		case len(k.Scopes) == 0:
			return nil, fmt.Errorf("key %s: no scopes", k.ID)
		}
		for _, sc := range k.Scopes {
			if !slices.Contains(keys.Scopes, sc) {
				return nil, fmt.Errorf("key %s: unknown scope %q", k.ID, sc)
			}
		}
		if slices.ContainsFunc(st.recs, func(r *store.Key) bool { return r.ID == k.ID }) {
			return nil, fmt.Errorf("key %s is listed twice", k.ID)
		}
		st.recs = append(st.recs, &store.Key{ID: k.ID, Name: k.Name, Team: k.Team, Scopes: k.Scopes, SecretSHA256: sum, ExpiresAt: k.ExpiresAt})
	}
	svc, err := keys.New(ctx, st, admin)
	if err != nil {
		return nil, err
	}
	set.keys = svc
	return set, nil
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}

// Authenticate is the key's principal (auth.Authenticator).
func (t *Tenants) Authenticate(ctx context.Context, key string) (auth.Principal, error) {
	return t.cur.Load().keys.Authenticate(ctx, key)
}

// LookupKey is the principal of the key with this id while it stands
// (auth.KeyLookup): the E2B layer's access tokens name their key.
func (t *Tenants) LookupKey(ctx context.Context, id string) (auth.Principal, error) {
	return t.cur.Load().keys.LookupKey(ctx, id)
}

// Quota is team's quota (zero: none).
func (t *Tenants) Quota(team string) wire.Quotas {
	return t.cur.Load().quotas[team]
}

// keysFileStore holds a KeysFile's keys for keys.Service: read-only, as
// the keys are the Secret's; last-used times are not kept.
type keysFileStore struct{ recs []*store.Key }

func (s *keysFileStore) ListKeys(context.Context) ([]*store.Key, error) { return s.recs, nil }
func (s *keysFileStore) SetKeysUsed(context.Context, map[string]time.Time) error {
	return nil
}
func (s *keysFileStore) CreateKey(context.Context, *store.Key) error { return errKeysInSecret() }
func (s *keysFileStore) RevokeKey(context.Context, string, time.Time) error {
	return errKeysInSecret()
}

func errKeysInSecret() error {
	return errdefs.Invalid(wire.CodeInvalidKey, "in cluster mode keys live in the gateway's keys file (Secret sbx-gateway-keys): edit it with kubectl")
}

// NewKey makes an API key for a keys file as the hosts' key service makes
// one (internal/auth/keys): it returns the key, to give its holder, and
// the entry that stores only its secret's hash.
func NewKey(ctx context.Context, req wire.CreateKeyRequest) (string, KeysFileKey, error) {
	if req.Team == "" || !podspec.ValidLabelValue(req.Team) {
		return "", KeysFileKey{}, errdefs.Invalid(wire.CodeInvalidKey, "team %q: a key of the gateway names its team, a Kubernetes label value", req.Team)
	}
	st := &captureStore{}
	svc, err := keys.New(ctx, st, "")
	if err != nil {
		return "", KeysFileKey{}, err
	}
	defer svc.Close()
	made, err := svc.Create(ctx, req)
	if err != nil {
		return "", KeysFileKey{}, err
	}
	r := st.made
	return made.Key, KeysFileKey{ID: r.ID, Name: r.Name, Team: r.Team, Scopes: r.Scopes, SecretSHA256: hex.EncodeToString(r.SecretSHA256), ExpiresAt: r.ExpiresAt}, nil
}

// captureStore keeps the one key NewKey makes.
type captureStore struct {
	keysFileStore
	made store.Key
}

func (s *captureStore) CreateKey(_ context.Context, k *store.Key) error {
	s.made = *k
	return nil
}
