// Package treetar packs a directory tree into a tar stream and unpacks it
// again exactly: the same names, bytes, modes (setuid, setgid, sticky),
// owners, nanosecond modification and access times, symlinks, hard links,
// empty directories, device nodes, fifos and extended attributes, including
// the trusted.* ones overlayfs keeps in an upper directory. An overlay
// whiteout (a 0/0 character device) and an opaque directory
// (trusted.overlay.opaque=y) therefore round-trip as what they are, unlike
// in an OCI layer, whose whiteout files this package does not translate.
//
// It is for trees sbx itself owns, such as a stopped sandbox's upper
// directory going to and coming back from the blob store. Sockets are left
// out; sparse files come back dense.
package treetar

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

const xattrPrefix = "SCHILY.xattr."

// Pack writes the tree under dir to w, dir itself first as "./", then every
// entry in lexical order, so that parents precede children and hard links
// follow their first name.
func Pack(w io.Writer, dir string) error {
	tw := tar.NewWriter(w)
	type inode struct{ dev, ino uint64 }
	seen := map[inode]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := "./"
		if p != dir {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			name = filepath.ToSlash(rel)
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return fmt.Errorf("treetar: %s: %w", p, err)
		}
		hdr := &tar.Header{
			Name:       name,
			Mode:       int64(st.Mode & 0o7777),
			Uid:        int(st.Uid),
			Gid:        int(st.Gid),
			ModTime:    time.Unix(st.Mtim.Sec, st.Mtim.Nsec),
			AccessTime: time.Unix(st.Atim.Sec, st.Atim.Nsec),
			Format:     tar.FormatPAX,
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			hdr.Typeflag = tar.TypeDir
			if name != "./" {
				hdr.Name += "/"
			}
		case unix.S_IFREG:
			hdr.Typeflag, hdr.Size = tar.TypeReg, st.Size
		case unix.S_IFLNK:
			hdr.Typeflag = tar.TypeSymlink
			if hdr.Linkname, err = os.Readlink(p); err != nil {
				return fmt.Errorf("treetar: %w", err)
			}
		case unix.S_IFCHR, unix.S_IFBLK:
			hdr.Typeflag = tar.TypeChar
			if st.Mode&unix.S_IFMT == unix.S_IFBLK {
				hdr.Typeflag = tar.TypeBlock
			}
			hdr.Devmajor, hdr.Devminor = int64(unix.Major(st.Rdev)), int64(unix.Minor(st.Rdev))
		case unix.S_IFIFO:
			hdr.Typeflag = tar.TypeFifo
		default: // sockets: nothing to keep
			return nil
		}
		if hdr.Typeflag != tar.TypeDir && st.Nlink > 1 {
			id := inode{st.Dev, st.Ino}
			if first, ok := seen[id]; ok {
				// Times belong to the inode, restored with the first name;
				// reading that name's bytes may have moved the atime since.
				hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeLink, first, 0
				hdr.AccessTime = time.Time{}
			} else {
				seen[id] = name
			}
		}
		if hdr.Typeflag != tar.TypeLink {
			x, err := readXattrs(p)
			if err != nil {
				return err
			}
			hdr.PAXRecords = x
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("treetar: %s: %w", p, err)
		}
		if hdr.Typeflag != tar.TypeReg || hdr.Size == 0 {
			return nil
		}
		f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW, 0)
		if err != nil {
			return fmt.Errorf("treetar: %w", err)
		}
		defer f.Close()
		if _, err := io.CopyN(tw, f, hdr.Size); err != nil {
			return fmt.Errorf("treetar: reading %s (changed while packing?): %w", p, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// readXattrs returns every extended attribute of p as PAX records.
func readXattrs(p string) (map[string]string, error) {
	buf := make([]byte, 4096)
	for {
		n, err := unix.Llistxattr(p, buf)
		if errors.Is(err, unix.ERANGE) {
			buf = make([]byte, len(buf)*4)
			continue
		}
		if errors.Is(err, unix.ENOTSUP) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("treetar: list xattrs of %s: %w", p, err)
		}
		buf = buf[:n]
		break
	}
	var recs map[string]string
	for _, name := range strings.Split(string(buf), "\x00") {
		if name == "" {
			continue
		}
		val, err := getXattr(p, name)
		if errors.Is(err, unix.ENODATA) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("treetar: read xattr %s of %s: %w", name, p, err)
		}
		if recs == nil {
			recs = map[string]string{}
		}
		recs[xattrPrefix+name] = string(val)
	}
	return recs, nil
}

func getXattr(p, name string) ([]byte, error) {
	val := make([]byte, 256)
	for {
		n, err := unix.Lgetxattr(p, name, val)
		if errors.Is(err, unix.ERANGE) {
			val = make([]byte, len(val)*4)
			continue
		}
		if err != nil {
			return nil, err
		}
		return val[:n], nil
	}
}

// Unpack restores a stream made by Pack into dir, which must exist and be
// empty. Names that are absolute or hold "..", parents that are not
// directories made by this stream, and hard links to names outside it are
// refused, so nothing is written outside dir even from a tampered stream.
func Unpack(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	type dirTimes struct {
		path         string
		atime, mtime time.Time
	}
	var dirs []dirTimes
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil && !errors.Is(err, tar.ErrInsecurePath) {
			return fmt.Errorf("treetar: read: %w", err)
		}
		rel, err := cleanName(hdr.Name)
		if err != nil {
			return err
		}
		p := filepath.Join(dir, rel)
		if rel != "." {
			if err := checkParent(dir, rel); err != nil {
				return err
			}
		}
		if err := create(dir, p, rel, hdr, tr); err != nil {
			return err
		}
		if hdr.Typeflag == tar.TypeLink {
			continue // shares the first name's inode and metadata
		}
		if err := setMeta(p, hdr); err != nil {
			return err
		}
		if hdr.Typeflag == tar.TypeDir {
			dirs = append(dirs, dirTimes{p, hdr.AccessTime, hdr.ModTime})
		} else if err := setTimes(p, hdr.AccessTime, hdr.ModTime); err != nil {
			return err
		}
	}
	// Directories last, deepest first: creating entries changes their times.
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := setTimes(dirs[i].path, dirs[i].atime, dirs[i].mtime); err != nil {
			return err
		}
	}
	return nil
}

// cleanName turns a tar name into a clean relative path ("." for the root).
func cleanName(name string) (string, error) {
	if strings.HasPrefix(name, "/") || strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("treetar: refusing entry %q: absolute or NUL", name)
	}
	for _, c := range strings.Split(name, "/") {
		if c == ".." {
			return "", fmt.Errorf("treetar: refusing entry %q: it leaves the tree", name)
		}
	}
	return path.Clean(name), nil
}

// checkParent requires every parent of rel to be a real directory already.
func checkParent(dir, rel string) error {
	parent := path.Dir(rel)
	if parent == "." {
		return nil
	}
	p := dir
	for _, c := range strings.Split(parent, "/") {
		p = filepath.Join(p, c)
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() {
			return fmt.Errorf("treetar: parent %q of %q is not a directory of the stream", parent, rel)
		}
	}
	return nil
}

func create(dir, p, rel string, hdr *tar.Header, tr io.Reader) error {
	var err error
	switch hdr.Typeflag {
	case tar.TypeDir:
		if rel == "." {
			return nil
		}
		err = os.Mkdir(p, 0o700)
	case tar.TypeReg:
		var f *os.File
		f, err = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
		if err == nil {
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
	case tar.TypeSymlink:
		err = os.Symlink(hdr.Linkname, p)
	case tar.TypeLink:
		var target string
		if target, err = cleanName(hdr.Linkname); err != nil {
			return err
		}
		if target == "." {
			return fmt.Errorf("treetar: hard link %q to the root", rel)
		}
		if err := checkParent(dir, target); err != nil {
			return err
		}
		// link(2) does not follow a final symlink: the link is to the entry itself.
		err = os.Link(filepath.Join(dir, target), p)
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		kind := map[byte]uint32{tar.TypeChar: unix.S_IFCHR, tar.TypeBlock: unix.S_IFBLK, tar.TypeFifo: unix.S_IFIFO}[hdr.Typeflag]
		err = unix.Mknod(p, kind|0o600, int(unix.Mkdev(uint32(hdr.Devmajor), uint32(hdr.Devminor))))
	default:
		return fmt.Errorf("treetar: entry %q has unsupported type %q", rel, hdr.Typeflag)
	}
	if err != nil {
		return fmt.Errorf("treetar: create %s: %w", rel, err)
	}
	return nil
}

// setMeta applies owner, mode and xattrs in the order that keeps them all:
// chown clears setuid/setgid bits and file capabilities, so it goes first.
func setMeta(p string, hdr *tar.Header) error {
	if err := unix.Lchown(p, hdr.Uid, hdr.Gid); err != nil {
		return fmt.Errorf("treetar: chown %s: %w", p, err)
	}
	if hdr.Typeflag != tar.TypeSymlink {
		if err := unix.Fchmodat(unix.AT_FDCWD, p, uint32(hdr.Mode&0o7777), 0); err != nil {
			return fmt.Errorf("treetar: chmod %s: %w", p, err)
		}
	}
	for k, v := range hdr.PAXRecords {
		name, ok := strings.CutPrefix(k, xattrPrefix)
		if !ok {
			continue
		}
		if err := unix.Lsetxattr(p, name, []byte(v), 0); err != nil {
			return fmt.Errorf("treetar: set xattr %s on %s: %w", name, p, err)
		}
	}
	return nil
}

func setTimes(p string, atime, mtime time.Time) error {
	if atime.IsZero() {
		atime = mtime
	}
	ts := []unix.Timespec{unix.NsecToTimespec(atime.UnixNano()), unix.NsecToTimespec(mtime.UnixNano())}
	if err := unix.UtimesNanoAt(unix.AT_FDCWD, p, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("treetar: set times of %s: %w", p, err)
	}
	return nil
}

// Check reads a stream made by Pack to its end without writing anything and
// reports whether it is complete and would unpack: a stream cut short or
// holding names outside the tree is an error.
func Check(r io.Reader) error {
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil && !errors.Is(err, tar.ErrInsecurePath) {
			return fmt.Errorf("treetar: read: %w", err)
		}
		if _, err := cleanName(hdr.Name); err != nil {
			return err
		}
		if _, err := io.Copy(io.Discard, tr); err != nil {
			return fmt.Errorf("treetar: read %s: %w", hdr.Name, err)
		}
	}
}
