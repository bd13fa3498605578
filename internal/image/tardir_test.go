package image

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestTarDirRoundTrip sends a directory through TarDir and Import and compares
// the layer with the source, entry by entry.
func TestTarDirRoundTrip(t *testing.T) {
	m, _, _ := newTestManager(t)
	src := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	p := func(s string) string { return filepath.Join(src, s) }
	must(os.MkdirAll(p("etc/sub"), 0o750))
	must(os.WriteFile(p("etc/file"), []byte("content"), 0o644))
	must(os.Chown(p("etc/file"), 1234, 5678))
	must(unix.Lsetxattr(p("etc/file"), "user.tag", []byte("v"), 0))
	must(os.WriteFile(p("suid"), []byte("#!"), 0o755))
	must(unix.Fchmodat(unix.AT_FDCWD, p("suid"), 0o4755, 0))
	must(os.Link(p("etc/file"), p("etc/sub/hard")))
	must(os.Symlink("../etc/file", p("link")))
	must(unix.Mkfifo(p("fifo"), 0o600))
	old := time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC)
	must(os.Chtimes(p("etc/sub"), old, old))

	var first, second bytes.Buffer
	must(TarDir(&first, src))
	must(TarDir(&second, src))
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Fatal("TarDir is not deterministic")
	}
	img, err := m.Import(context.Background(), "dir", &first)
	must(err)
	dst := m.LayerDirs(img.Layers)[0]

	n := 0
	must(filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == src {
			return err
		}
		n++
		rel, _ := filepath.Rel(src, path)
		a, b := lstat(t, path), lstat(t, filepath.Join(dst, rel))
		if a.Mode != b.Mode || a.Uid != b.Uid || a.Gid != b.Gid || a.Rdev != b.Rdev || a.Size != b.Size || a.Nlink != b.Nlink {
			t.Errorf("%s: got mode %o uid %d gid %d rdev %x size %d nlink %d, want %o %d %d %x %d %d",
				rel, b.Mode, b.Uid, b.Gid, b.Rdev, b.Size, b.Nlink, a.Mode, a.Uid, a.Gid, a.Rdev, a.Size, a.Nlink)
		}
		if a.Mode&unix.S_IFMT != unix.S_IFLNK && a.Mtim.Sec != b.Mtim.Sec {
			t.Errorf("%s: mtime %d, want %d", rel, b.Mtim.Sec, a.Mtim.Sec)
		}
		return nil
	}))
	if n != 7 {
		t.Errorf("walked %d entries, want 7", n)
	}
	if target, _ := os.Readlink(filepath.Join(dst, "link")); target != "../etc/file" {
		t.Errorf("link -> %q", target)
	}
	buf := make([]byte, 8)
	if n, err := unix.Lgetxattr(filepath.Join(dst, "etc/file"), "user.tag", buf); err != nil || string(buf[:n]) != "v" {
		t.Errorf("xattr = %q, %v", buf[:n], err)
	}
}

func lstat(t *testing.T, p string) *syscall.Stat_t {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t)
}

func TestTarDirNotADir(t *testing.T) {
	f := filepath.Join(t.TempDir(), "f")
	os.WriteFile(f, nil, 0o644)
	if err := TarDir(&bytes.Buffer{}, f); err == nil {
		t.Fatal("TarDir of a file succeeded")
	}
}
