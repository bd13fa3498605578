package gateway

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/wire"
)

// TestTenantsKeysFile: a key NewKey made authenticates as its team once
// its entry is in the file, the admin key still works, a removed entry
// stops working on the next reload, and a file the gateway would not
// honour is refused whole.
func TestTenantsKeysFile(t *testing.T) {
	ctx := context.Background()
	key, entry, err := NewKey(ctx, wire.CreateKeyRequest{Name: "ci", Team: "team-a", Scopes: []string{"sandboxes:read", "exec"}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "keys.yaml")
	write := func(f KeysFile) {
		b, err := yaml.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(KeysFile{Teams: []KeysFileTeam{{Name: "team-a", Quotas: wire.Quotas{MaxSandboxes: 2}}}, Keys: []KeysFileKey{entry}})
	tn, err := NewTenants(ctx, "sbx_admin", file)
	if err != nil {
		t.Fatal(err)
	}
	p, err := tn.Authenticate(ctx, key)
	if err != nil || p.Team != "team-a" || p.KeyID != entry.ID || p.Has(auth.ScopeSandboxesWrite) || !p.Has(auth.ScopeExec) {
		t.Fatalf("the file's key: %+v %v", p, err)
	}
	if p, err := tn.Authenticate(ctx, "sbx_admin"); err != nil || !p.AllTeams() {
		t.Fatalf("the admin key: %+v %v", p, err)
	}
	if q := tn.Quota("team-a"); q.MaxSandboxes != 2 {
		t.Fatalf("team-a's quota: %+v", q)
	}
	if _, err := tn.Authenticate(ctx, key+"x"); err == nil {
		t.Fatal("a wrong secret authenticated")
	}

	write(KeysFile{})
	if err := tn.reload(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tn.Authenticate(ctx, key); err == nil {
		t.Fatal("a key removed from the file still authenticates")
	}

	for name, body := range map[string]string{
		"unknown field":     "teams: []\nkeyz: []\n",
		"per-host quota":    "teams:\n- name: a\n  quotas: {maxRunning: 1}\n",
		"bad team name":     "teams:\n- name: \"a b\"\n",
		"short hash":        "keys:\n- {id: 0123456789abcdef, team: a, scopes: [exec], secretSHA256: abcd}\n",
		"unknown scope":     "keys:\n- {id: 0123456789abcdef, team: a, scopes: [root], secretSHA256: " + strings.Repeat("ab", 32) + "}\n",
		"key without scope": "keys:\n- {id: 0123456789abcdef, team: a, scopes: [], secretSHA256: " + strings.Repeat("ab", 32) + "}\n",
	} {
		if _, err := parseKeysFile(ctx, "", []byte(body)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
