package blob_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sbxhq/sbx/internal/blob"
	"github.com/sbxhq/sbx/internal/blob/blobtest"
	"github.com/sbxhq/sbx/internal/errdefs"
)

func TestDir(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store {
		d, err := blob.NewDir(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
}

type failingReader struct{ n int }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("source broke")
	}
	f.n--
	return copy(p, "partial"), nil
}

// What the directory holds besides objects: a failed Put leaves no
// temporary file, a Delete no empty parent directory, and a cancelled Put
// says it was cancelled.
func TestDirLeavesNoFiles(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	d, err := blob.NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Put(ctx, "k", bytes.NewReader([]byte("old"))); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Put(ctx, "k", &failingReader{n: 3}); err == nil {
		t.Fatal("Put from a failing reader succeeded")
	}
	if entries, _ := os.ReadDir(root); len(entries) != 1 {
		t.Errorf("files left: %v", entries)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := d.Put(cctx, "k2", bytes.NewReader([]byte("x"))); !errors.Is(err, context.Canceled) {
		t.Errorf("Put with a cancelled context = %v", err)
	}
	if _, err := d.Put(ctx, "sandboxes/sbx-1/upper.tar.zst", bytes.NewReader([]byte("x"))); err != nil {
		t.Fatal(err)
	}
	if err := d.Delete(ctx, "sandboxes/sbx-1/upper.tar.zst"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "sandboxes")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("empty parent directories left behind: %v", err)
	}
}

func TestCheckKey(t *testing.T) {
	for _, bad := range []string{"", "/abs", "a//b", "a/../b", "..", ".", "a/./b", "a b", "a/", "ü"} {
		if err := blob.CheckKey(bad); !errdefs.Is(err, errdefs.KindInvalid) {
			t.Errorf("CheckKey(%q) = %v, want invalid", bad, err)
		}
	}
	for _, good := range []string{"a", "a/b.c", "sandboxes/sbx-x1/upper.tar.zst", "..a", "a-_."} {
		if err := blob.CheckKey(good); err != nil {
			t.Errorf("CheckKey(%q) = %v", good, err)
		}
	}
}
