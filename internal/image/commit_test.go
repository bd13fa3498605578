package image

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCommitUpper changes a mounted image in every way overlayfs records
// (new files, a deleted file, a replaced directory), commits the upper dir
// and checks that the image plus the new layer shows the same tree.
func TestCommitUpper(t *testing.T) {
	m, _, _ := newTestManager(t)
	ctx := context.Background()
	img, err := m.Import(ctx, "lower", bytes.NewReader(makeTar(t,
		file("gone", "x"), file("keep", "k"), dirEnt("dir/"), file("dir/a", "a"), file("dir/b", "b"))))
	if err != nil {
		t.Fatal(err)
	}
	up, work, target := mountDirs(t)
	if err := MountRootfs(m.LayerDirs(img.Layers), up, work, target); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Remove(filepath.Join(target, "gone")))
	must(os.RemoveAll(filepath.Join(target, "dir")))
	must(os.Mkdir(filepath.Join(target, "dir"), 0o750)) // opaque: a and b stay hidden
	must(os.WriteFile(filepath.Join(target, "dir/c"), []byte("c"), 0o600))
	must(os.WriteFile(filepath.Join(target, "keep"), []byte("changed"), 0o644)) // copied up
	must(os.WriteFile(filepath.Join(target, "new"), []byte("n"), 0o644))
	must(Unmount(target))

	layer, size, release, err := m.CommitUpper(ctx, up)
	must(err)
	if size <= 0 {
		t.Errorf("size %d", size)
	}
	// Pinned until released: a prune must keep it.
	must(m.Prune(ctx, nil))
	if _, ok := m.layerSize(layerHex(layer)); !ok {
		t.Fatal("a pinned layer was pruned")
	}

	up2, work2, target2 := mountDirs(t)
	must(MountRootfs(m.LayerDirs(append(slices.Clone(img.Layers), layer)), up2, work2, target2))
	t.Cleanup(func() { Unmount(target2) })
	if got := readDirNames(t, target2); !slices.Equal(got, []string{"dir", "keep", "new"}) {
		t.Errorf("root = %v", got)
	}
	if got := readDirNames(t, filepath.Join(target2, "dir")); !slices.Equal(got, []string{"c"}) {
		t.Errorf("dir = %v, want only c (opaque)", got)
	}
	if b, _ := os.ReadFile(filepath.Join(target2, "keep")); string(b) != "changed" {
		t.Errorf("keep = %q", b)
	}
	if fi, err := os.Stat(filepath.Join(target2, "dir")); err != nil || fi.Mode().Perm() != 0o750 {
		t.Errorf("dir mode %v, %v", fi.Mode(), err)
	}
	// Only the opaque marker of overlay's attributes is in the layer.
	var xattrs []string
	filepath.WalkDir(m.layerDir(layerHex(layer)), func(p string, d os.DirEntry, err error) error {
		if names, _ := listXattrs(p); len(names) > 0 {
			xattrs = append(xattrs, names...)
		}
		return nil
	})
	if !slices.Equal(xattrs, []string{"trusted.overlay.opaque"}) {
		t.Errorf("layer xattrs %v, want only trusted.overlay.opaque", xattrs)
	}

	// Released and unreferenced, it can be removed.
	must(Unmount(target2))
	release()
	must(m.RemoveLayers(ctx, []string{layer}, nil))
	if _, err := os.Stat(m.layerDir(layerHex(layer))); !os.IsNotExist(err) {
		t.Errorf("layer still there: %v", err)
	}
	var st unix.Stat_t
	if unix.Stat(m.layerDir(layerHex(img.Layers[0])), &st) != nil {
		t.Error("the image's own layer went too")
	}
}
