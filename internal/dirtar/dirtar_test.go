package dirtar

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sbxhq/sbx/wire"
)

func TestRoundTripGzip(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(src, "a", "b"), 0o755)
	os.WriteFile(filepath.Join(src, "a", "b", "f"), []byte("data"), 0o640)
	os.WriteFile(filepath.Join(src, TempPrefix+"x"), []byte("ours"), 0o600) // skipped
	var plain, zipped bytes.Buffer
	if err := Write(&plain, src); err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(&zipped)
	zw.Write(plain.Bytes())
	zw.Close()
	if err := Extract(&zipped, dst); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dst, "a", "b", "f"))
	if err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("extracted file: %v %v", fi, err)
	}
	if entries, _ := os.ReadDir(dst); len(entries) != 1 {
		t.Fatalf("%d entries in the destination, want only a", len(entries))
	}
}

// A gzip stream that breaks inside a file is a bad stream (TAR_INVALID),
// not a disk error, and changes nothing.
func TestExtractCorruptGzip(t *testing.T) {
	var plain, zipped bytes.Buffer
	tw := tar.NewWriter(&plain)
	body := strings.Repeat("abcdefgh", 100000)
	tw.WriteHeader(&tar.Header{Name: "f", Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
	tw.Write([]byte(body))
	tw.Close()
	zw := gzip.NewWriter(&zipped)
	zw.Write(plain.Bytes())
	zw.Close()
	data := zipped.Bytes()
	data = data[:len(data)-20] // cut: the checksum and the end of the data
	dst := t.TempDir()
	var te *Error
	if err := Extract(bytes.NewReader(data), dst); !errors.As(err, &te) || te.Code != wire.CodeTarInvalid {
		t.Fatalf("corrupt gzip: %v", err)
	}
	if entries, _ := os.ReadDir(dst); len(entries) != 0 {
		t.Fatalf("a refused stream left %d entries", len(entries))
	}
}

// TestWriteOneFileSystem: a mount point's contents stay out (tar of / must
// not walk /proc); the mount point itself is listed.
func TestWriteOneFileSystem(t *testing.T) {
	src := t.TempDir()
	mnt := filepath.Join(src, "mnt")
	os.Mkdir(mnt, 0o755)
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		t.Skip("cannot mount a tmpfs (not root?):", err)
	}
	defer syscall.Unmount(mnt, syscall.MNT_DETACH)
	os.WriteFile(filepath.Join(mnt, "other-fs"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(src, "here"), []byte("x"), 0o644)
	var buf bytes.Buffer
	if err := Write(&buf, src); err != nil {
		t.Fatal(err)
	}
	var names []string
	tr := tar.NewReader(&buf)
	for {
		hdr, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, hdr.Name)
	}
	if got := strings.Join(names, ","); got != "here,mnt/" {
		t.Fatalf("entries %s, want here,mnt/", got)
	}
}
