package image

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// TarDir writes the tree under dir (not dir itself) to w as a tar stream, in
// lexical order so the same tree always gives the same bytes. It keeps modes
// (setuid too), owners, mtimes, symlinks, hard links, devices, fifos and the
// xattrs it can read; sockets are skipped. Names are relative ("etc/passwd").
func TarDir(w io.Writer, dir string) error {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(root); err != nil {
		return err
	} else if !fi.IsDir() {
		return fmt.Errorf("image: %s is not a directory", dir)
	}
	tw := tar.NewWriter(w)
	type inode struct{ dev, ino uint64 }
	seen := map[inode]string{} // first name of each multiply-linked file
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, root+string(filepath.Separator)))
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSocket != 0 {
			return nil
		}
		var target string
		if fi.Mode()&fs.ModeSymlink != 0 {
			if target, err = os.Readlink(p); err != nil {
				return err
			}
		}
		hdr, err := tar.FileInfoHeader(fi, target)
		if err != nil {
			return err
		}
		// Names and access/change times would make the bytes depend on the
		// host and on when the tree was last read. Whole seconds, truncated
		// (the writer would round), as docker does.
		hdr.Name, hdr.Uname, hdr.Gname = rel, "", ""
		hdr.AccessTime, hdr.ChangeTime = time.Time{}, time.Time{}
		hdr.ModTime = hdr.ModTime.Truncate(time.Second)
		if fi.IsDir() {
			hdr.Name += "/"
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && fi.Mode().IsRegular() && st.Nlink > 1 {
			id := inode{uint64(st.Dev), st.Ino}
			if first, ok := seen[id]; ok {
				hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeLink, first, 0
			} else {
				seen[id] = rel
			}
		}
		if x := readXattrs(p); len(x) > 0 {
			hdr.PAXRecords = x
			hdr.Format = tar.FormatPAX
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if hdr.Typeflag != tar.TypeReg || hdr.Size == 0 {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		// Copy exactly Size bytes: a file that grew meanwhile must not break the tar.
		if _, err := io.CopyN(tw, f, hdr.Size); err != nil {
			return fmt.Errorf("image: reading %s: %w", p, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// readXattrs returns p's extended attributes as PAX records; unreadable ones
// (no permission, no support) are left out.
func readXattrs(p string) map[string]string {
	sz, err := unix.Llistxattr(p, nil)
	if err != nil || sz <= 0 {
		return nil
	}
	buf := make([]byte, sz)
	if sz, err = unix.Llistxattr(p, buf); err != nil {
		return nil
	}
	recs := map[string]string{}
	for _, name := range strings.Split(string(buf[:sz]), "\x00") {
		if name == "" {
			continue
		}
		vsz, err := unix.Lgetxattr(p, name, nil)
		if err != nil {
			continue
		}
		val := make([]byte, vsz)
		if vsz, err = unix.Lgetxattr(p, name, val); err != nil {
			continue
		}
		recs["SCHILY.xattr."+name] = string(val[:vsz])
	}
	return recs
}
