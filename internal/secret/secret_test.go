package secret

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

func TestSealedAtRestAndScopedByTeam(t *testing.T) {
	dir := t.TempDir()
	st, err := store.OpenSQLite(filepath.Join(dir, "sbx.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	k, err := Open(dir, st)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v, want mode 0600", fi, err)
	}
	red := auth.WithPrincipal(context.Background(), auth.Principal{KeyID: "k1", Team: "red"})
	blue := auth.WithPrincipal(context.Background(), auth.Principal{KeyID: "k2", Team: "blue"})
	const value = "sk-very-secret-value"
	info, err := k.Create(red, wire.CreateSecretRequest{Name: "api", Value: value, SecretHosts: wire.SecretHosts{Hosts: []string{"API.example.com"}}})
	if err != nil {
		t.Fatal(err)
	}
	if info.Team != "red" || info.Size != len(value) || len(info.Hosts) != 1 || info.Hosts[0] != "api.example.com" || info.AllowHTTP {
		t.Fatalf("info %+v", info)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "sbx.db"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), value) {
		t.Fatal("the store holds the secret in the clear")
	}
	sys := auth.System(context.Background(), "test")
	if v, err := k.Open(sys, "red", "api"); err != nil || v.Value != value || len(v.Hosts) != 1 {
		t.Fatalf("Open = %+v, %v", v, err)
	}
	if _, err := k.Open(sys, "blue", "api"); !errdefs.Is(err, errdefs.KindNotFound) {
		t.Fatalf("another team's secret: %v, want not found", err)
	}
	if l, _ := k.List(blue); len(l) != 0 {
		t.Fatalf("blue lists %+v", l)
	}
	if err := k.Delete(blue, "api"); !errdefs.Is(err, errdefs.KindNotFound) {
		t.Fatalf("blue deletes red's secret: %v", err)
	}
	// A daemon with another key cannot open it.
	other := t.TempDir()
	k2, err := Open(other, st)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k2.Open(context.Background(), "red", "api"); err == nil {
		t.Fatal("opened with the wrong key")
	}
	anywhere := wire.SecretHosts{Hosts: []string{"a.example"}}
	for _, bad := range []wire.CreateSecretRequest{
		{Name: "", Value: "x", SecretHosts: anywhere}, {Name: "a/b", Value: "x", SecretHosts: anywhere},
		{Name: "ok", Value: "", SecretHosts: anywhere}, {Name: "ok", Value: strings.Repeat("x", MaxValue+1), SecretHosts: anywhere},
		{Name: "ok", Value: "x"}, {Name: "ok", Value: "x", SecretHosts: wire.SecretHosts{Hosts: []string{"*"}}},
		{Name: "ok", Value: "x", SecretHosts: wire.SecretHosts{Hosts: []string{"a b"}}},
	} {
		if _, err := k.Create(red, bad); !errdefs.Is(err, errdefs.KindInvalid) {
			t.Errorf("Create(%q, %d bytes, hosts %q) = %v, want invalid", bad.Name, len(bad.Value), bad.Hosts, err)
		}
	}
	if err := k.Delete(red, "api"); err != nil {
		t.Fatal(err)
	}
}
