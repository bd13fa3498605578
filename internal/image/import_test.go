package image

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/errdefs"
)

func TestImportRootfsAllEntryKinds(t *testing.T) {
	m, rec, _ := newTestManager(t)
	dirTime := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	reg := file("etc/file", "hello")
	reg.Uid, reg.Gid, reg.Mode = 1000, 1001, 0o640
	reg.PAXRecords = map[string]string{"SCHILY.xattr.user.note": "kept", "SCHILY.xattr.trusted.overlay.redirect": "/x"}
	suid := file("bin/suid", "x")
	suid.Mode = 0o4755
	data := dirEnt("data/")
	data.Mode, data.ModTime, data.Uid = 0o700, dirTime, 42
	tmp := dirEnt("tmp/")
	tmp.Mode = 0o1777
	ents := []ent{
		dirEnt("./"), dirEnt("etc/"), reg, suid,
		symlink("bin/sh", "busybox"),
		{Header: tar.Header{Typeflag: tar.TypeLink, Name: "etc/hard", Linkname: "etc/file"}},
		{Header: tar.Header{Typeflag: tar.TypeFifo, Name: "run/fifo", Mode: 0o600}},
		data, file("data/inside", "written after the dir entry"), tmp,
	}
	tb := makeTar(t, ents...)
	img, err := m.Import(context.Background(), "all", bytes.NewReader(tb))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(tb)
	want := "sha256:" + hex.EncodeToString(sum[:])
	if img.ID != want || len(img.Layers) != 1 || img.Layers[0] != want || img.SizeBytes != int64(len(tb)) || img.Source != "import" {
		t.Fatalf("record %+v, want ID and layer %s, size %d", img, want, len(tb))
	}
	if got, err := rec.GetImage(context.Background(), "all"); err != nil || got.ID != want {
		t.Fatalf("stored record %+v, %v", got, err)
	}
	root := m.LayerDirs(img.Layers)[0]

	st := func(p string) *syscall.Stat_t {
		t.Helper()
		fi, err := os.Lstat(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t)
	}
	check := func(p string, typ, perm uint32, uid, gid uint32) *syscall.Stat_t {
		t.Helper()
		s := st(p)
		if s.Mode&unix.S_IFMT != typ || s.Mode&0o7777 != perm || s.Uid != uid || s.Gid != gid {
			t.Errorf("%s: mode %o uid %d gid %d, want type %o perm %o uid %d gid %d", p, s.Mode, s.Uid, s.Gid, typ, perm, uid, gid)
		}
		return s
	}
	f := check("etc/file", unix.S_IFREG, 0o640, 1000, 1001)
	if b, _ := os.ReadFile(filepath.Join(root, "etc/file")); string(b) != "hello" {
		t.Errorf("etc/file = %q", b)
	}
	if f.Mtim.Sec != testTime.Unix() {
		t.Errorf("etc/file mtime %d, want %d", f.Mtim.Sec, testTime.Unix())
	}
	buf := make([]byte, 64)
	if n, err := unix.Lgetxattr(filepath.Join(root, "etc/file"), "user.note", buf); err != nil || string(buf[:n]) != "kept" {
		t.Errorf("xattr user.note = %q, %v", buf[:n], err)
	}
	if _, err := unix.Lgetxattr(filepath.Join(root, "etc/file"), "trusted.overlay.redirect", buf); err == nil {
		t.Error("an overlay xattr from the image was applied")
	}
	check("bin/suid", unix.S_IFREG, 0o4755, 0, 0)
	check("bin/sh", unix.S_IFLNK, 0o777, 0, 0)
	if target, _ := os.Readlink(filepath.Join(root, "bin/sh")); target != "busybox" {
		t.Errorf("bin/sh -> %q", target)
	}
	if h := st("etc/hard"); h.Ino != f.Ino || h.Nlink != 2 {
		t.Errorf("etc/hard: ino %d nlink %d, want ino %d nlink 2", h.Ino, h.Nlink, f.Ino)
	}
	check("run/fifo", unix.S_IFIFO, 0o600, 0, 0)
	if d := check("data", unix.S_IFDIR, 0o700, 42, 0); d.Mtim.Sec != dirTime.Unix() {
		t.Errorf("data mtime %d, want %d (set after its contents)", d.Mtim.Sec, dirTime.Unix())
	}
	check("tmp", unix.S_IFDIR, 0o1777, 0, 0)
	check("run", unix.S_IFDIR, 0o755, 0, 0) // made implicitly
}

func TestImportReplacesName(t *testing.T) {
	m, _, _ := newTestManager(t)
	ctx := context.Background()
	a, err := m.Import(ctx, "img", bytes.NewReader(makeTar(t, file("a", "1"))))
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Import(ctx, "img", bytes.NewReader(makeTar(t, file("b", "2"))))
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Get(ctx, "img")
	if err != nil || got.ID != b.ID || a.ID == b.ID {
		t.Fatalf("got %+v, %v; want ID %s", got, err, b.ID)
	}
	if list, _ := m.List(ctx); len(list) != 1 {
		t.Fatalf("List has %d images, want 1", len(list))
	}
}

func TestImportCompressedAndDedupe(t *testing.T) {
	m, _, dataDir := newTestManager(t)
	tb := makeTar(t, file("hello", "world"))
	var gz, zs bytes.Buffer
	gw := gzip.NewWriter(&gz)
	gw.Write(tb)
	gw.Close()
	zw, _ := zstd.NewWriter(&zs)
	zw.Write(tb)
	zw.Close()
	var ids []string
	for i, stream := range [][]byte{tb, gz.Bytes(), zs.Bytes()} {
		img, err := m.Import(context.Background(), fmt.Sprintf("img%d", i), bytes.NewReader(stream))
		if err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		ids = append(ids, img.ID)
		if img.SizeBytes != int64(len(tb)) {
			t.Errorf("stream %d: size %d, want %d", i, img.SizeBytes, len(tb))
		}
	}
	if ids[0] != ids[1] || ids[0] != ids[2] {
		t.Fatalf("IDs differ across compressions: %v", ids)
	}
	ents, _ := os.ReadDir(filepath.Join(dataDir, "layers"))
	if len(ents) != 2 { // <hex>/ and <hex>.size
		t.Fatalf("layers/ has %d entries, want one layer", len(ents))
	}
	assertEmptyDirs(t, filepath.Join(dataDir, "tmp"))
}

func TestImportBadInput(t *testing.T) {
	m, rec, dataDir := newTestManager(t)
	big := makeTar(t, file("big", strings.Repeat("x", 10000)), file("after", "y"))
	var gz bytes.Buffer
	gw := gzip.NewWriter(&gz)
	gw.Write(big)
	gw.Close()
	cases := map[string][]byte{
		"empty":           nil,
		"zero blocks":     make([]byte, 1024),
		"garbage":         []byte("this is not a tar archive at all"),
		"garbage block":   bytes.Repeat([]byte("junk"), 300),
		"truncated":       big[:3000],
		"truncated gzip":  gz.Bytes()[:gz.Len()/2],
		"bad gzip header": {0x1f, 0x8b, 0, 0, 0},
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := m.Import(context.Background(), "bad", bytes.NewReader(data))
			assertCode(t, err, errdefs.KindInvalid, "INVALID_IMAGE")
			if name == "empty" && !strings.Contains(err.Error(), "expected a tar stream") {
				t.Errorf("message does not say what was expected: %v", err)
			}
			assertEmptyDirs(t, filepath.Join(dataDir, "layers"), filepath.Join(dataDir, "tmp"))
		})
	}
	if _, err := rec.GetImage(context.Background(), "bad"); !errdefs.Is(err, errdefs.KindNotFound) {
		t.Fatalf("a record was written: %v", err)
	}
	_, err := m.Import(context.Background(), "Bad Name", bytes.NewReader(big))
	assertCode(t, err, errdefs.KindInvalid, "INVALID_IMAGE_NAME")
}

// TestImportMaliciousTar feeds tars that try to write outside the layer. Each
// must fail or stay inside the layer; nothing may appear on the host.
func TestImportMaliciousTar(t *testing.T) {
	m, _, dataDir := newTestManager(t)
	top := filepath.Dir(dataDir) // dataDir's parent: escapes would land here
	outside := filepath.Join(top, "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(outside, "victim")
	if err := os.WriteFile(victim, []byte("original"), 0o644); err != nil {
		t.Fatal(err)
	}
	absName := fmt.Sprintf("/sbx-image-test-abs-%d", os.Getpid())
	t.Cleanup(func() { os.Remove(absName) })

	refused := map[string][]ent{
		"dotdot":             {file("../../evil", "x")},
		"dotdot inside":      {file("a/../../../evil", "x")},
		"symlink parent abs": {symlink("a", outside), file("a/pwn", "x")},
		"symlink parent rel": {symlink("b", "../../.."), file("b/outside/pwn", "x")},
		"symlink dir parent": {dirEnt("d/"), symlink("d/l", outside), file("d/l/pwn", "x")},
		"hardlink dotdot":    {{Header: tar.Header{Typeflag: tar.TypeLink, Name: "h", Linkname: "../../outside/victim"}}},
		"hardlink via link":  {symlink("a", outside), {Header: tar.Header{Typeflag: tar.TypeLink, Name: "h", Linkname: "a/victim"}}},
		"whiteout dotdot":    {dirEnt("x/"), file("x/.wh...", "")},
		"device in symlink":  {symlink("a", outside), {Header: tar.Header{Typeflag: tar.TypeFifo, Name: "a/fifo", Mode: 0o600}}},
	}
	for name, ents := range refused {
		t.Run(name, func(t *testing.T) {
			_, err := m.Import(context.Background(), "evil", bytes.NewReader(makeTar(t, ents...)))
			assertCode(t, err, errdefs.KindInvalid, "INVALID_IMAGE")
			assertEmptyDirs(t, filepath.Join(dataDir, "layers"), filepath.Join(dataDir, "tmp"))
		})
	}

	// Contained: an absolute name lands inside the layer; a file replacing a
	// symlink replaces the link, not its target.
	img, err := m.Import(context.Background(), "contained", bytes.NewReader(makeTar(t,
		file(absName, "abs"),
		symlink("s", victim), file("s", "replaced"),
	)))
	if err != nil {
		t.Fatal(err)
	}
	root := m.LayerDirs(img.Layers)[0]
	if b, err := os.ReadFile(filepath.Join(root, absName)); err != nil || string(b) != "abs" {
		t.Errorf("absolute entry not inside the layer: %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "s")); err != nil || string(b) != "replaced" {
		t.Errorf("s = %q, %v", b, err)
	}

	// Nothing escaped.
	if _, err := os.Lstat(absName); !os.IsNotExist(err) {
		t.Errorf("%s was written on the host", absName)
	}
	if b, _ := os.ReadFile(victim); string(b) != "original" {
		t.Errorf("victim changed: %q", b)
	}
	if fi, _ := os.Stat(victim); fi.Sys().(*syscall.Stat_t).Nlink != 1 {
		t.Error("victim got a hard link")
	}
	for _, dir := range []string{top, outside} {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if e.Name() != "data" && e.Name() != "outside" && e.Name() != "victim" {
				t.Errorf("unexpected %s in %s", e.Name(), dir)
			}
		}
	}
}

func TestConcurrentImportsOfOneLayer(t *testing.T) {
	m, _, dataDir := newTestManager(t)
	var ents []ent
	for i := range 200 {
		ents = append(ents, file(fmt.Sprintf("d%d/f%d", i%10, i), strings.Repeat("z", i)))
	}
	tb := makeTar(t, ents...)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = m.Import(context.Background(), fmt.Sprintf("img%d", i), bytes.NewReader(tb))
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	sum := sha256.Sum256(tb)
	root := filepath.Join(dataDir, "layers", hex.EncodeToString(sum[:]))
	for i := range 200 {
		b, err := os.ReadFile(filepath.Join(root, fmt.Sprintf("d%d/f%d", i%10, i)))
		if err != nil || len(b) != i {
			t.Fatalf("f%d: %d bytes, %v", i, len(b), err)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(dataDir, "layers")); len(ents) != 2 {
		t.Fatalf("layers/ has %d entries, want 2", len(ents))
	}
	assertEmptyDirs(t, filepath.Join(dataDir, "tmp"))
}

func TestNewCleansTmp(t *testing.T) {
	m, rec, dataDir := newTestManager(t)
	_ = m
	stale := filepath.Join(dataDir, "tmp", "layer-123", "half")
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := New(dataDir, rec); err != nil {
		t.Fatal(err)
	}
	assertEmptyDirs(t, filepath.Join(dataDir, "tmp"))
}

func TestValidateName(t *testing.T) {
	for _, ok := range []string{"base", "alpine:3.20", "ghcr.io/org/img@sha256:abc", "a", "x_y-z.1"} {
		if err := ValidateName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "Upper", "-x", ".x", "a b", "a\n", strings.Repeat("a", 129), "é"} {
		if err := ValidateName(bad); errdefs.CodeOf(err) != "INVALID_IMAGE_NAME" {
			t.Errorf("%q: got %v", bad, err)
		}
	}
}
