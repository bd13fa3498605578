package image

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// mountDirs returns upper, work and target dirs under a fresh temp dir.
func mountDirs(t *testing.T) (upper, work, target string) {
	d := t.TempDir()
	target = filepath.Join(d, "merged")
	t.Cleanup(func() { Unmount(target) })
	return filepath.Join(d, "upper"), filepath.Join(d, "work"), target
}

func readDirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestWhiteoutsThroughOverlay(t *testing.T) {
	m, _, _ := newTestManager(t)
	lower := makeTar(t, file("gone", "x"), file("keep", "k"), dirEnt("dir/"), file("dir/a", "a"), file("dir/b", "b"),
		dirEnt("merge/"), file("merge/old", "o"))
	upper := makeTar(t, file(".wh.gone", ""), dirEnt("dir/"), file("dir/.wh..wh..opq", ""), file("dir/c", "c"),
		file("merge/new", "n"))
	img, err := m.Import(context.Background(), "wh", bytes.NewReader(mustDockerSave(t, imageOf(t, testConfig, lower, upper))))
	if err != nil {
		t.Fatal(err)
	}
	up, work, target := mountDirs(t)
	if err := MountRootfs(m.LayerDirs(img.Layers), up, work, target); err != nil {
		t.Fatal(err)
	}
	if got := readDirNames(t, target); !slices.Equal(got, []string{"dir", "keep", "merge"}) {
		t.Errorf("root = %v, want gone whited out", got)
	}
	if got := readDirNames(t, filepath.Join(target, "dir")); !slices.Equal(got, []string{"c"}) {
		t.Errorf("opaque dir = %v, want only c", got)
	}
	if got := readDirNames(t, filepath.Join(target, "merge")); !slices.Equal(got, []string{"new", "old"}) {
		t.Errorf("plain dir = %v, want both layers merged", got)
	}
}

func TestMountRoundTrip(t *testing.T) {
	m, _, _ := newTestManager(t)
	img, err := m.Import(context.Background(), "rt", bytes.NewReader(makeTar(t, file("etc/lower", "l"), file("del", "d"))))
	if err != nil {
		t.Fatal(err)
	}
	layers := m.LayerDirs(img.Layers)
	up, work, target := mountDirs(t)
	if err := MountRootfs(layers, up, work, target); err != nil {
		t.Fatal(err)
	}
	if ok, err := IsMounted(target); err != nil || !ok {
		t.Fatalf("IsMounted after mount: %v, %v", ok, err)
	}
	if err := os.WriteFile(filepath.Join(target, "etc/new"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(target, "del")); err != nil {
		t.Fatal(err)
	}
	if err := Unmount(target); err != nil {
		t.Fatal(err)
	}
	if ok, err := IsMounted(target); err != nil || ok {
		t.Fatalf("IsMounted after unmount: %v, %v", ok, err)
	}
	// The layer is untouched; the writes are in upper.
	if _, err := os.Stat(filepath.Join(layers[0], "etc/new")); !os.IsNotExist(err) {
		t.Error("a write reached the layer")
	}
	if _, err := os.Stat(filepath.Join(layers[0], "del")); err != nil {
		t.Error("a delete reached the layer")
	}
	if err := MountRootfs(layers, up, work, target); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(target, "etc/new")); err != nil || string(b) != "mine" {
		t.Errorf("after remount etc/new = %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(target, "del")); !os.IsNotExist(err) {
		t.Error("deleted file is back after remount")
	}
	// Unmount is idempotent, also for paths that do not exist.
	for range 2 {
		if err := Unmount(target); err != nil {
			t.Fatal(err)
		}
	}
	if err := Unmount(filepath.Join(t.TempDir(), "nope")); err != nil {
		t.Fatal(err)
	}
}

func TestUnmountBusyDetaches(t *testing.T) {
	m, _, _ := newTestManager(t)
	img, err := m.Import(context.Background(), "busy", bytes.NewReader(makeTar(t, file("f", "x"))))
	if err != nil {
		t.Fatal(err)
	}
	up, work, target := mountDirs(t)
	if err := MountRootfs(m.LayerDirs(img.Layers), up, work, target); err != nil {
		t.Fatal(err)
	}
	// A mount below the target makes a plain unmount fail with EBUSY.
	inner := filepath.Join(target, "inner")
	os.Mkdir(inner, 0o755)
	up2, work2, _ := mountDirs(t)
	if err := MountRootfs(m.LayerDirs(img.Layers), up2, work2, inner); err != nil {
		t.Fatal(err)
	}
	if err := Unmount(target); err != nil {
		t.Fatal(err)
	}
	if ok, _ := IsMounted(target); ok {
		t.Fatal("still mounted")
	}
}

// TestMountManyLayers needs an option string over one page, which takes the
// layer-by-layer mount path; the top layer must win.
func TestMountManyLayers(t *testing.T) {
	needRoot(t)
	base := filepath.Join(t.TempDir(), strings.Repeat("long-directory-name-", 4))
	var layers []string
	for i := range 60 {
		d := filepath.Join(base, fmt.Sprintf("layer-%03d", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "x"), []byte(fmt.Sprint(i)), 0o644)
		os.WriteFile(filepath.Join(d, fmt.Sprintf("only-%d", i)), nil, 0o644)
		layers = append(layers, d)
	}
	if n := len(strings.Join(layers, ":")); n < os.Getpagesize() {
		t.Fatalf("option string only %d bytes", n)
	}
	for _, n := range []int{3, 60} {
		up, work, target := mountDirs(t)
		if err := MountRootfs(layers[:n], up, work, target); err != nil {
			t.Fatalf("%d layers: %v", n, err)
		}
		if b, _ := os.ReadFile(filepath.Join(target, "x")); string(b) != fmt.Sprint(n-1) {
			t.Errorf("%d layers: x = %q, want the top layer's %d", n, b, n-1)
		}
		if got := len(readDirNames(t, target)); got != n+1 {
			t.Errorf("%d layers: %d entries", n, got)
		}
	}
}

func TestIsMountedEscapedPath(t *testing.T) {
	m, _, _ := newTestManager(t)
	img, err := m.Import(context.Background(), "esc", bytes.NewReader(makeTar(t, file("f", "x"))))
	if err != nil {
		t.Fatal(err)
	}
	d := t.TempDir()
	target := filepath.Join(d, "with space\tand tab")
	t.Cleanup(func() { Unmount(target) })
	if err := MountRootfs(m.LayerDirs(img.Layers), filepath.Join(d, "u"), filepath.Join(d, "w"), target); err != nil {
		t.Fatal(err)
	}
	if ok, err := IsMounted(target); err != nil || !ok {
		t.Fatalf("IsMounted: %v, %v", ok, err)
	}
}

// TestCleanStaleStages: the staging mounts of a daemon that died are
// detached and removed; those of a running one, and new ones made the old
// way, are left alone.
func TestCleanStaleStages(t *testing.T) {
	needRoot(t)
	hostStageDir := stageDir
	stageDir = t.TempDir()
	t.Cleanup(func() { stageDir = hostStageDir })
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	stage := func(name string) string {
		v := filepath.Join(stageDir, name, "0")
		if err := os.MkdirAll(v, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mount(src, v, "", unix.MS_BIND, ""); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Unmount(v, unix.MNT_DETACH) })
		return v
	}
	dead := stage("4194305-1")                       // above any pid_max
	own := stage(strconv.Itoa(os.Getpid()) + "-2")   // a dead daemon whose pid this process now has
	live := stage(strconv.Itoa(os.Getppid()) + "-3") // a running daemon's
	legacy := stage("123")                           // the old naming, fresh
	legacyOld := stage("456")                        // the old naming, left long ago
	old := time.Now().Add(-2 * time.Minute)
	if err := os.Chtimes(filepath.Dir(legacyOld), old, old); err != nil {
		t.Fatal(err)
	}
	if err := CleanStaleStages(); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{dead, own, legacyOld} {
		if m, _ := IsMounted(v); m {
			t.Errorf("%s is still mounted", v)
		}
		if _, err := os.Stat(filepath.Dir(v)); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", filepath.Dir(v), err)
		}
	}
	for _, v := range []string{live, legacy} {
		if m, _ := IsMounted(v); !m {
			t.Errorf("%s was unmounted", v)
		}
	}
	if _, err := os.Stat(filepath.Join(src, "keep")); err != nil {
		t.Errorf("what the mounts showed is gone: %v", err)
	}
}
