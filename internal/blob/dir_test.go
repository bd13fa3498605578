package blob

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
)

func TestDirRoundTrip(t *testing.T) {
	ctx := context.Background()
	d, err := NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("sbx"), 100000)
	n, err := d.Put(ctx, "sandboxes/sbx-1/upper.tar.zst", bytes.NewReader(data))
	if err != nil || n != int64(len(data)) {
		t.Fatalf("Put = %d, %v", n, err)
	}
	if ok, err := d.Exists(ctx, "sandboxes/sbx-1/upper.tar.zst"); !ok || err != nil {
		t.Errorf("Exists = %v, %v", ok, err)
	}
	rc, err := d.Get(ctx, "sandboxes/sbx-1/upper.tar.zst")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if !bytes.Equal(got, data) {
		t.Error("Get returned other bytes")
	}
	// Put replaces.
	if _, err := d.Put(ctx, "sandboxes/sbx-1/upper.tar.zst", bytes.NewReader([]byte("new"))); err != nil {
		t.Fatal(err)
	}
	rc, _ = d.Get(ctx, "sandboxes/sbx-1/upper.tar.zst")
	got, _ = io.ReadAll(rc)
	rc.Close()
	if string(got) != "new" {
		t.Errorf("after replace: %q", got)
	}
	if err := d.Delete(ctx, "sandboxes/sbx-1/upper.tar.zst"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := d.Exists(ctx, "sandboxes/sbx-1/upper.tar.zst"); ok {
		t.Error("exists after delete")
	}
	if _, err := os.Stat(filepath.Join(d.root, "sandboxes")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("empty parent directories left behind: %v", err)
	}
	if err := d.Delete(ctx, "sandboxes/sbx-1/upper.tar.zst"); err != nil {
		t.Errorf("deleting a missing blob: %v", err)
	}
	if _, err := d.Get(ctx, "missing"); errdefs.CodeOf(err) != "BLOB_NOT_FOUND" {
		t.Errorf("Get missing = %v", err)
	}
}

type failingReader struct{ n int }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("source broke")
	}
	f.n--
	return copy(p, "partial"), nil
}

// A Put that fails midway leaves the old object and no temporary file.
func TestDirPutFailureKeepsOld(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	d, _ := NewDir(root)
	if _, err := d.Put(ctx, "k", bytes.NewReader([]byte("old"))); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Put(ctx, "k", &failingReader{n: 3}); err == nil {
		t.Fatal("Put from a failing reader succeeded")
	}
	rc, err := d.Get(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if string(got) != "old" {
		t.Errorf("object after a failed Put = %q", got)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 {
		t.Errorf("files left: %v", entries)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := d.Put(cctx, "k2", bytes.NewReader([]byte("x"))); !errors.Is(err, context.Canceled) {
		t.Errorf("Put with a cancelled context = %v", err)
	}
}

func TestCheckKey(t *testing.T) {
	for _, bad := range []string{"", "/abs", "a//b", "a/../b", "..", ".", "a/./b", "a b", "a/", "ü"} {
		if err := CheckKey(bad); !errdefs.Is(err, errdefs.KindInvalid) {
			t.Errorf("CheckKey(%q) = %v, want invalid", bad, err)
		}
	}
	for _, good := range []string{"a", "a/b.c", "sandboxes/sbx-x1/upper.tar.zst", "..a", "a-_."} {
		if err := CheckKey(good); err != nil {
			t.Errorf("CheckKey(%q) = %v", good, err)
		}
	}
}
