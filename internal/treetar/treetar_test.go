package treetar

import (
	"archive/tar"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// describe lists everything Pack promises to keep about a tree, one line per
// entry, with hard links named by the first path of their inode.
func describe(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	inodes := map[uint64]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		line := fmt.Sprintf("%s type=%o mode=%o owner=%d:%d", rel, st.Mode&unix.S_IFMT, st.Mode&0o7777, st.Uid, st.Gid)
		if st.Mode&unix.S_IFMT != unix.S_IFDIR || rel != "." {
			line += fmt.Sprintf(" mtime=%d.%09d", st.Mtim.Sec, st.Mtim.Nsec)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			b, _ := os.ReadFile(p)
			sum := sha256.Sum256(b)
			line += " sha256=" + hex.EncodeToString(sum[:8])
		case unix.S_IFLNK:
			target, _ := os.Readlink(p)
			line += " -> " + target
		case unix.S_IFCHR, unix.S_IFBLK:
			line += fmt.Sprintf(" dev=%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev))
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR && st.Nlink > 1 {
			if first, ok := inodes[st.Ino]; ok {
				line += " link=" + first
			} else {
				inodes[st.Ino] = rel
			}
		}
		x, err := readXattrs(p)
		if err != nil {
			return err
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			line += fmt.Sprintf(" %s=%q", strings.TrimPrefix(k, xattrPrefix), x[k])
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// buildTree makes one of everything an overlay upper directory may hold.
func buildTree(t *testing.T, dir string) {
	t.Helper()
	w := func(name string, data []byte, mode os.FileMode) {
		must(t, os.WriteFile(filepath.Join(dir, name), data, mode))
		must(t, os.Chmod(filepath.Join(dir, name), mode))
	}
	must(t, os.MkdirAll(filepath.Join(dir, "a/b/empty"), 0o755))
	must(t, os.Mkdir(filepath.Join(dir, "opaque"), 0o750))
	must(t, unix.Lsetxattr(filepath.Join(dir, "opaque"), "trusted.overlay.opaque", []byte("y"), 0))
	big := make([]byte, 3<<20)
	rand.Read(big)
	w("a/big.bin", big, 0o644)
	w("a/setuid", []byte("#!/bin/sh\n"), 0o4755|os.ModeSetuid)
	must(t, os.Chmod(filepath.Join(dir, "a/setuid"), 0o755|os.ModeSetuid))
	w("a/b/owned", []byte("owned"), 0o600)
	must(t, os.Lchown(filepath.Join(dir, "a/b/owned"), 1234, 5678))
	must(t, os.Link(filepath.Join(dir, "a/big.bin"), filepath.Join(dir, "hardlink")))
	must(t, os.Symlink("a/b/owned", filepath.Join(dir, "symlink")))
	must(t, os.Symlink("/nonexistent/dangling", filepath.Join(dir, "a/dangling")))
	must(t, os.Lchown(filepath.Join(dir, "a/dangling"), 42, 43))
	must(t, unix.Mknod(filepath.Join(dir, "whiteout"), unix.S_IFCHR, 0))
	must(t, os.Link(filepath.Join(dir, "whiteout"), filepath.Join(dir, "a/whiteout2"))) // overlay shares whiteouts
	must(t, unix.Mkfifo(filepath.Join(dir, "fifo"), 0o640))
	must(t, unix.Lsetxattr(filepath.Join(dir, "a/b/owned"), "user.note", []byte("hello\x00bin"), 0))
	must(t, os.Chmod(filepath.Join(dir, "a/b"), 0o1777|os.ModeSticky))
	must(t, os.Chmod(filepath.Join(dir, "a/b"), 0o777|os.ModeSticky))
	must(t, os.Chmod(dir, 0o711))
	old := time.Date(2001, 2, 3, 4, 5, 6, 789, time.UTC)
	for _, name := range []string{"a/big.bin", "a/b", "fifo", "a/b/empty"} {
		must(t, os.Chtimes(filepath.Join(dir, name), old, old))
	}
	must(t, unix.UtimesNanoAt(unix.AT_FDCWD, filepath.Join(dir, "symlink"),
		[]unix.Timespec{unix.NsecToTimespec(old.UnixNano()), unix.NsecToTimespec(old.UnixNano() + 5)}, unix.AT_SYMLINK_NOFOLLOW))
	ln, err := (&net{}).listen(filepath.Join(dir, "sock"))
	must(t, err)
	t.Cleanup(func() { unix.Close(ln) })
}

// net makes a unix socket file without the net package's cleanup.
type net struct{}

func (net) listen(p string) (int, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return 0, err
	}
	return fd, unix.Bind(fd, &unix.SockaddrUnix{Name: p})
}

func TestRoundTrip(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (chown, mknod, trusted xattrs)")
	}
	src, dst := t.TempDir(), t.TempDir()
	buildTree(t, src)
	var buf bytes.Buffer
	must(t, Pack(&buf, src))
	must(t, Unpack(bytes.NewReader(buf.Bytes()), dst))
	// The restored tree packs to the same bytes (before reading it changes atimes).
	var again bytes.Buffer
	must(t, Pack(&again, dst))
	if !bytes.Equal(again.Bytes(), buf.Bytes()) {
		t.Error("packing the restored tree gave other bytes")
	}

	want := describe(t, src)
	want = slices.DeleteFunc(want, func(s string) bool { return strings.HasPrefix(s, "sock ") })
	got := describe(t, dst)
	if !slices.Equal(got, want) {
		t.Errorf("restored tree differs:\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
	}
}

// Streams that would write outside the target are refused.
func TestUnpackRefusesEscapes(t *testing.T) {
	cases := map[string][]*tar.Header{
		"dotdot":       {{Name: "../x", Typeflag: tar.TypeReg}},
		"absolute":     {{Name: "/etc/x", Typeflag: tar.TypeReg}},
		"via symlink":  {{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "/tmp"}, {Name: "l/x", Typeflag: tar.TypeReg}},
		"no parent":    {{Name: "missing/x", Typeflag: tar.TypeReg}},
		"link outside": {{Name: "x", Typeflag: tar.TypeLink, Linkname: "../../etc/passwd"}},
		"link via sym": {{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "/etc"}, {Name: "x", Typeflag: tar.TypeLink, Linkname: "l/passwd"}},
	}
	for name, hdrs := range cases {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			tw := tar.NewWriter(&buf)
			for _, h := range hdrs {
				h.Mode = 0o644
				must(t, tw.WriteHeader(h))
			}
			must(t, tw.Close())
			root := t.TempDir()
			dir := filepath.Join(root, "in")
			must(t, os.Mkdir(dir, 0o700))
			if err := Unpack(&buf, dir); err == nil {
				t.Fatal("unpack succeeded")
			}
			if entries, _ := os.ReadDir(root); len(entries) != 1 {
				t.Errorf("something was written next to the target: %v", entries)
			}
		})
	}
}

func TestTruncatedStream(t *testing.T) {
	src := t.TempDir()
	must(t, os.WriteFile(filepath.Join(src, "f"), bytes.Repeat([]byte("x"), 100000), 0o644))
	var buf bytes.Buffer
	must(t, Pack(&buf, src))
	cut := io.LimitReader(&buf, int64(buf.Len()/2))
	if err := Unpack(cut, t.TempDir()); err == nil {
		t.Error("a truncated stream unpacked without error")
	}
}
