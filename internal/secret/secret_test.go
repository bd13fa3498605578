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
	info, err := k.Create(red, "api", value)
	if err != nil {
		t.Fatal(err)
	}
	if info.Team != "red" || info.Size != len(value) {
		t.Fatalf("info %+v", info)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "sbx.db"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), value) {
		t.Fatal("the store holds the secret in the clear")
	}
	if v, err := k.Value(auth.System(context.Background(), "test"), "red", "api"); err != nil || v != value {
		t.Fatalf("Value = %q, %v", v, err)
	}
	if _, err := k.Value(auth.System(context.Background(), "test"), "blue", "api"); !errdefs.Is(err, errdefs.KindNotFound) {
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
	if _, err := k2.Value(context.Background(), "red", "api"); err == nil {
		t.Fatal("opened with the wrong key")
	}
	for _, bad := range []struct{ name, value string }{{"", "x"}, {"a/b", "x"}, {"ok", ""}, {"ok", strings.Repeat("x", MaxValue+1)}} {
		if _, err := k.Create(red, bad.name, bad.value); !errdefs.Is(err, errdefs.KindInvalid) {
			t.Errorf("Create(%q, %d bytes) = %v, want invalid", bad.name, len(bad.value), err)
		}
	}
	if err := k.Delete(red, "api"); err != nil {
		t.Fatal(err)
	}
}
