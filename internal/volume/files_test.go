package volume

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

func u32(v uint32) *uint32 { return &v }

// The file methods work inside the volume and never reach outside it: not
// with "..", not through a symlink (absolute or relative) a sandbox left
// in it, for any operation.
func TestFilesStayInsideTheVolume(t *testing.T) {
	top := t.TempDir()
	vol := filepath.Join(top, "mnt")
	os.Mkdir(vol, 0o755)
	secret := filepath.Join(top, "outside")
	os.WriteFile(secret, []byte("host secret"), 0o600)
	os.Mkdir(filepath.Join(top, "outdir"), 0o755)
	os.Symlink(secret, filepath.Join(vol, "abs"))
	os.Symlink("../outside", filepath.Join(vol, "rel"))
	os.Symlink("../outdir", filepath.Join(vol, "dirlink"))
	f, err := OpenFiles(vol)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	for _, p := range []string{"abs", "/rel", "dirlink/x"} {
		if _, err := f.Open(p); errdefs.CodeOf(err) != wire.CodeInvalidPath {
			t.Errorf("Open(%s) = %v, want INVALID_PATH", p, err)
		}
	}
	if _, err := f.Write("/dirlink/new", strings.NewReader("x"), true, Attrs{}); errdefs.CodeOf(err) != wire.CodeInvalidPath {
		t.Errorf("Write through a symlinked directory = %v", err)
	}
	if _, err := f.Write("/abs", strings.NewReader("x"), true, Attrs{}); errdefs.CodeOf(err) != wire.CodeInvalidPath {
		t.Errorf("Write over a symlink that leads outside = %v", err)
	}
	if _, err := f.MakeDir("/dirlink/d", true, Attrs{}); errdefs.CodeOf(err) != wire.CodeInvalidPath {
		t.Errorf("MakeDir through a symlink = %v", err)
	}
	if _, err := f.SetAttrs("/rel", Attrs{Mode: u32(0o777)}); errdefs.CodeOf(err) != wire.CodeInvalidPath {
		t.Errorf("SetAttrs through a symlink = %v", err)
	}
	if _, err := f.List("/dirlink", 1); err == nil {
		t.Errorf("List through a symlinked directory succeeded")
	}
	if err := f.Remove("/dirlink/x"); errdefs.CodeOf(err) != wire.CodeInvalidPath {
		t.Errorf("Remove through a symlink = %v", err)
	}
	if err := f.Remove("/"); errdefs.CodeOf(err) != wire.CodeInvalidPath {
		t.Errorf("Remove of the root = %v", err)
	}
	// ".." stays at the root, as in a path inside the volume.
	if e, err := f.Stat("/../.."); err != nil || e.Path != "/" || e.Type != "directory" {
		t.Errorf("Stat(/../..) = %+v, %v", e, err)
	}
	if b, _ := os.ReadFile(secret); string(b) != "host secret" {
		t.Errorf("the file outside changed: %q", b)
	}
	if fi, err := os.Stat(secret); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the file outside: %v %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(top, "outdir", "d")); !os.IsNotExist(err) {
		t.Errorf("a directory was made outside: %v", err)
	}
	// Removing a symlink removes the link, not what it points at.
	if err := f.Remove("/rel"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(secret); err != nil {
		t.Errorf("Remove of a symlink removed its target: %v", err)
	}
}

func TestFilesOperations(t *testing.T) {
	f, err := OpenFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.MakeDir("/a/b", false, Attrs{}); errdefs.CodeOf(err) != wire.CodeFileNotFound {
		t.Errorf("MakeDir without parents = %v", err)
	}
	if e, err := f.MakeDir("/a/b", true, Attrs{Mode: u32(0o750), UID: u32(1000), GID: u32(1000)}); err != nil || e.Type != "directory" || e.Mode != 0o750 || e.UID != 1000 || e.Name != "b" || e.Path != "/a/b" {
		t.Fatalf("MakeDir = %+v, %v", e, err)
	}
	if _, err := f.MakeDir("/a/b", false, Attrs{}); errdefs.CodeOf(err) != wire.CodeFileExists {
		t.Errorf("MakeDir of an existing directory = %v", err)
	}
	e, err := f.Write("a/b/f.txt", strings.NewReader("hello"), false, Attrs{Mode: u32(0o600)})
	if err != nil || e.Size != 5 || e.Type != "file" || e.Mode != 0o600 || e.UID != 0 {
		t.Fatalf("Write = %+v, %v", e, err)
	}
	if _, err := f.Write("a/b/f.txt", strings.NewReader("again"), false, Attrs{}); errdefs.CodeOf(err) != wire.CodeFileExists {
		t.Errorf("Write without overwrite over a file = %v", err)
	}
	if e, err := f.Write("a/b/f.txt", strings.NewReader("again!"), true, Attrs{}); err != nil || e.Size != 6 || e.Mode != 0o600 {
		t.Errorf("overwrite keeps the mode: %+v, %v", e, err)
	}
	if _, err := f.Write("/a", strings.NewReader("x"), true, Attrs{}); errdefs.CodeOf(err) != wire.CodeIsADirectory {
		t.Errorf("Write over a directory = %v", err)
	}
	r, err := f.Open("/a/b/f.txt")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	r.Close()
	if string(b) != "again!" {
		t.Errorf("read %q", b)
	}
	if _, err := f.Open("/a"); errdefs.CodeOf(err) != wire.CodeNotARegularFile {
		t.Errorf("Open of a directory = %v", err)
	}
	if _, err := f.Stat("/nope"); errdefs.CodeOf(err) != wire.CodeFileNotFound {
		t.Errorf("Stat of a missing path = %v", err)
	}
	one, err := f.List("/", 1)
	if err != nil || len(one) != 1 || one[0].Path != "/a" {
		t.Errorf("List depth 1 = %+v, %v", one, err)
	}
	all, err := f.List("/", 3)
	if err != nil || len(all) != 3 || all[2].Path != "/a/b/f.txt" {
		t.Errorf("List depth 3 = %+v, %v", all, err)
	}
	if _, err := f.List("/a/b/f.txt", 1); errdefs.CodeOf(err) != wire.CodeNotADirectory {
		t.Errorf("List of a file = %v", err)
	}
	if e, err := f.SetAttrs("/a/b/f.txt", Attrs{Mode: u32(0o4755), GID: u32(7)}); err != nil || e.Mode != 0o4755 || e.GID != 7 || e.UID != 0 {
		t.Errorf("SetAttrs = %+v, %v", e, err)
	}
	if _, err := f.SetAttrs("/a/b/f.txt", Attrs{Mode: u32(0o10000)}); errdefs.CodeOf(err) != wire.CodeInvalidParameter {
		t.Errorf("SetAttrs with a file type in mode = %v", err)
	}
	if err := f.Remove("/a"); err != nil {
		t.Fatal(err)
	}
	if err := f.Remove("/a"); errdefs.CodeOf(err) != wire.CodeFileNotFound {
		t.Errorf("Remove of a missing path = %v", err)
	}
}

// Another team's volume's files are not found.
func TestFilesOfAnotherTeam(t *testing.T) {
	m := &Manager{root: t.TempDir()}
	os.Mkdir(m.dir("vol_a"), 0o700)
	writeRecord(m.dir("vol_a"), &record{Volume: wire.Volume{Name: "data", SizeMiB: 64, Team: "a"}, ID: "vol_a"})
	teamB := auth.WithPrincipal(context.Background(), auth.Principal{KeyID: "kb", Team: "b"})
	if _, err := m.Files(teamB, "data"); errdefs.CodeOf(err) != wire.CodeVolumeNotFound {
		t.Errorf("team b's Files(data) = %v", err)
	}
	// Team a's own, not mounted: refused rather than written to the host's disk.
	teamA := auth.WithPrincipal(context.Background(), auth.Principal{KeyID: "ka", Team: "a"})
	if _, err := m.Files(teamA, "data"); !errdefs.Is(err, errdefs.KindUnavailable) {
		t.Errorf("unmounted Files(data) = %v", err)
	}
}
