package volume

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/auth"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"a", "data", "my-vol-1", "0x"} {
		if err := CheckName(ok); err != nil {
			t.Errorf("CheckName(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-a", "a-", "A", "a_b", "a/b", "..", "a.b", string(make([]byte, 64))} {
		if err := CheckName(bad); errdefs.CodeOf(err) != wire.CodeInvalidVolume {
			t.Errorf("CheckName(%q) = %v, want INVALID_VOLUME", bad, err)
		}
	}
}

// Bad input changes nothing: no directory is made.
func TestCreateRefusesBadSizes(t *testing.T) {
	m := &Manager{root: t.TempDir()}
	ctx := context.Background()
	for _, size := range []int{-1, 1, MinSizeMiB - 1, MaxSizeMiB + 1} {
		if _, err := m.Create(ctx, "v", size); errdefs.CodeOf(err) != wire.CodeInvalidVolume {
			t.Errorf("Create size %d = %v", size, err)
		}
	}
	if list, err := m.List(ctx); err != nil || len(list) != 0 {
		t.Errorf("after refused creates: %v, %v", list, err)
	}
	if _, err := m.Get(ctx, "v"); errdefs.CodeOf(err) != wire.CodeVolumeNotFound {
		t.Errorf("Get = %v", err)
	}
	if err := m.Delete(ctx, "v"); errdefs.CodeOf(err) != wire.CodeVolumeNotFound {
		t.Errorf("Delete = %v", err)
	}
}

// Another team's volume is not found, in a list, a get or a delete.
func TestVolumesAreScopedByTeam(t *testing.T) {
	m := &Manager{root: t.TempDir()}
	if err := os.Mkdir(m.dir("data"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := writeRecord(m.dir("data"), &record{Volume: wire.Volume{Name: "data", SizeMiB: 64, Team: "a"}}); err != nil {
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
	if _, err := m.Get(context.Background(), "data"); errdefs.CodeOf(err) != wire.CodeVolumeNotFound {
		t.Errorf("no principal: Get = %v, want VOLUME_NOT_FOUND", err)
	}
	if _, err := m.Get(teamB, "data"); errdefs.CodeOf(err) != wire.CodeVolumeNotFound {
		t.Errorf("team b: Get = %v, want VOLUME_NOT_FOUND", err)
	}
	if list, err := m.List(teamB); err != nil || len(list) != 0 {
		t.Errorf("team b: List = %v, %v", list, err)
	}
	if err := m.Delete(teamB, "data"); errdefs.CodeOf(err) != wire.CodeVolumeNotFound {
		t.Errorf("team b: Delete = %v, want VOLUME_NOT_FOUND", err)
	}
	if _, err := os.Stat(m.dir("data")); err != nil {
		t.Errorf("team b's delete removed team a's volume: %v", err)
	}
}

// fakeVolume writes the record of team's volume name with id, as Create
// would (without a filesystem).
func fakeVolume(t *testing.T, m *Manager, id, team, name string, sizeMiB int) {
	t.Helper()
	if err := os.Mkdir(m.dir(id), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := writeRecord(m.dir(id), &record{Volume: wire.Volume{Name: name, SizeMiB: sizeMiB, Team: team}, ID: id}); err != nil {
		t.Fatal(err)
	}
}

// Names are per team: each team's "data" is its own, found by name only
// by its team and by id only for its team; a create of a name another
// team has is no conflict and reveals nothing.
func TestNamesArePerTeam(t *testing.T) {
	m := &Manager{root: t.TempDir()}
	fakeVolume(t, m, "vol_a", "a", "data", 64)
	fakeVolume(t, m, "vol_b", "b", "data", 32)
	teamA := auth.WithPrincipal(context.Background(), auth.Principal{KeyID: "ka", Team: "a"})
	teamB := auth.WithPrincipal(context.Background(), auth.Principal{KeyID: "kb", Team: "b"})
	teamC := auth.WithPrincipal(context.Background(), auth.Principal{KeyID: "kc", Team: "c"})
	if v, err := m.Get(teamA, "data"); err != nil || v.SizeMiB != 64 {
		t.Errorf("team a: Get = %+v, %v", v, err)
	}
	if v, err := m.Get(teamB, "data"); err != nil || v.SizeMiB != 32 {
		t.Errorf("team b: Get = %+v, %v", v, err)
	}
	if id, err := m.Resolve("b", "data"); err != nil || id != "vol_b" {
		t.Errorf("Resolve(b, data) = %q, %v", id, err)
	}
	if _, err := m.Resolve("c", "data"); errdefs.CodeOf(err) != wire.CodeVolumeNotFound {
		t.Errorf("Resolve(c, data) = %v", err)
	}
	if _, err := m.Path("b", "vol_a"); errdefs.CodeOf(err) != wire.CodeVolumeNotFound || strings.Contains(err.Error(), "data") {
		t.Errorf("team b's Path of team a's id = %v", err)
	}
	if p, err := m.Path("a", "vol_a"); err != nil || p != m.dir("vol_a")+"/mnt" {
		t.Errorf("Path(a, vol_a) = %q, %v", p, err)
	}
	if err := m.Delete(teamB, "data"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Get(teamA, "data"); err != nil {
		t.Errorf("team b's delete of its data touched team a's: %v", err)
	}
	// Team c's create of "data" is checked against c's names only: the
	// quota check runs (no VOLUME_EXISTS first).
	m.CheckDisk = func(_ context.Context, team string, add int) error {
		return errdefs.Forbidden(wire.CodeQuotaDisk, "team %s: %d MiB more", team, add)
	}
	if _, err := m.Create(teamC, "data", 16); errdefs.CodeOf(err) != wire.CodeQuotaDisk || !strings.Contains(err.Error(), "team c: 16 MiB") {
		t.Errorf("team c's create of data = %v, want its quota checked", err)
	}
	if _, err := m.Create(teamA, "data", 16); errdefs.CodeOf(err) != wire.CodeVolumeExists {
		t.Errorf("team a's second data = %v", err)
	}
	if n, err := m.SizeMiB("a"); err != nil || n != 64 {
		t.Errorf("SizeMiB(a) = %d, %v", n, err)
	}
}
