package volume

import (
	"context"
	"os"
	"testing"

	"github.com/sbxhq/sbx/internal/auth"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/sdk"
)

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"a", "data", "my-vol-1", "0x"} {
		if err := CheckName(ok); err != nil {
			t.Errorf("CheckName(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-a", "a-", "A", "a_b", "a/b", "..", "a.b", string(make([]byte, 64))} {
		if err := CheckName(bad); errdefs.CodeOf(err) != sdk.CodeInvalidVolume {
			t.Errorf("CheckName(%q) = %v, want INVALID_VOLUME", bad, err)
		}
	}
}

// Bad input changes nothing: no directory is made.
func TestCreateRefusesBadSizes(t *testing.T) {
	m := &Manager{root: t.TempDir()}
	ctx := context.Background()
	for _, size := range []int{-1, 1, MinSizeMiB - 1, MaxSizeMiB + 1} {
		if _, err := m.Create(ctx, "v", size); errdefs.CodeOf(err) != sdk.CodeInvalidVolume {
			t.Errorf("Create size %d = %v", size, err)
		}
	}
	if list, err := m.List(ctx); err != nil || len(list) != 0 {
		t.Errorf("after refused creates: %v, %v", list, err)
	}
	if _, err := m.Get(ctx, "v"); errdefs.CodeOf(err) != sdk.CodeVolumeNotFound {
		t.Errorf("Get = %v", err)
	}
	if err := m.Delete(ctx, "v"); errdefs.CodeOf(err) != sdk.CodeVolumeNotFound {
		t.Errorf("Delete = %v", err)
	}
}

// Another team's volume is not found, in a list, a get or a delete.
func TestVolumesAreScopedByTeam(t *testing.T) {
	m := &Manager{root: t.TempDir()}
	if err := os.Mkdir(m.dir("data"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := writeRecord(m.dir("data"), &sdk.Volume{Name: "data", SizeMiB: 64, Team: "a"}); err != nil {
		t.Fatal(err)
	}
	teamA := auth.WithPrincipal(context.Background(), auth.Principal{KeyID: "ka", Team: "a"})
	teamB := auth.WithPrincipal(context.Background(), auth.Principal{KeyID: "kb", Team: "b"})
	for name, ctx := range map[string]context.Context{"team a": teamA, "system": auth.System(context.Background(), "test"), "admin": auth.WithPrincipal(context.Background(), auth.Admin)} {
		if v, err := m.Get(ctx, "data"); err != nil || v.Team != "a" {
			t.Errorf("%s: Get = %v, %v", name, v, err)
		}
	}
	// Neither a principal nor a system scope: nothing is seen (fail closed).
	if _, err := m.Get(context.Background(), "data"); errdefs.CodeOf(err) != sdk.CodeVolumeNotFound {
		t.Errorf("no principal: Get = %v, want VOLUME_NOT_FOUND", err)
	}
	if _, err := m.Get(teamB, "data"); errdefs.CodeOf(err) != sdk.CodeVolumeNotFound {
		t.Errorf("team b: Get = %v, want VOLUME_NOT_FOUND", err)
	}
	if list, err := m.List(teamB); err != nil || len(list) != 0 {
		t.Errorf("team b: List = %v, %v", list, err)
	}
	if err := m.Delete(teamB, "data"); errdefs.CodeOf(err) != sdk.CodeVolumeNotFound {
		t.Errorf("team b: Delete = %v, want VOLUME_NOT_FOUND", err)
	}
	if _, err := os.Stat(m.dir("data")); err != nil {
		t.Errorf("team b's delete removed team a's volume: %v", err)
	}
}
