package image

import (
	"archive/tar"
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// readError marks a failure to read the input (a bad tar, a cut stream, a lost
// connection) as opposed to a failure to write the layer on the host.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// srcReader remembers the last read error so a failed copy can be blamed on
// the input or on the disk.
type srcReader struct {
	r   io.Reader
	err error
}

func (s *srcReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		s.err = err
	}
	return n, err
}

type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// unpack extracts the tar stream r into the empty directory root and returns
// the sha256 hex and size of the whole stream (the layer's diffID).
//
// No entry can write outside root: absolute names are taken relative to root,
// names with ".." are refused, and a parent directory that is a symlink (or
// not a directory) is refused, so no path is ever resolved through a link the
// tar made. OCI whiteouts become overlayfs whiteouts. Errors reading r are
// *readError; entries breaking the rules are Invalid "INVALID_IMAGE".
func unpack(r io.Reader, root string) (digest string, size int64, err error) {
	h, n := sha256.New(), &counter{}
	src := &srcReader{r: io.TeeReader(bufio.NewReaderSize(r, 1<<16), io.MultiWriter(h, n))}
	tr := tar.NewReader(src)
	var dirs []dirTime
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil && err != tar.ErrInsecurePath { // insecure names are handled below
			return "", 0, &readError{err}
		}
		if err := extract(root, hdr, tr, src, &dirs); err != nil {
			return "", 0, err
		}
	}
	// The end-of-archive blocks and any padding belong to the digest too.
	if _, err := io.Copy(io.Discard, src); err != nil {
		return "", 0, &readError{err}
	}
	// Directory times last: creating entries inside a directory changes them.
	for _, d := range dirs {
		if err := setTimes(d.path, d.atime, d.mtime); err != nil {
			return "", 0, err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), n.n, nil
}

type dirTime struct {
	path         string
	atime, mtime time.Time
}

func invalidEntry(name, format string, args ...any) error {
	return errdefs.Invalid(wire.CodeInvalidImage, "layer entry %q: "+format, append([]any{name}, args...)...)
}

// cleanName turns a tar name into a path relative to the layer root, or "."
// for the root itself.
func cleanName(name string) (string, error) {
	rel := strings.TrimLeft(name, "/")
	for _, c := range strings.Split(rel, "/") {
		if c == ".." {
			return "", invalidEntry(name, "the name contains \"..\"; layer entries must stay inside the layer")
		}
	}
	return path.Clean("./" + rel), nil
}

// walkParents checks each parent directory of rel inside root, creating missing
// ones when create is set. A parent that is a symlink or not a directory is
// refused: following it could lead outside root. The staging directory belongs
// to this import alone, so nothing can swap a checked parent for a link.
func walkParents(root, rel, entry string, create bool) error {
	dir := root
	parts := strings.Split(rel, "/")
	for _, p := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, p)
		fi, err := os.Lstat(dir)
		switch {
		case os.IsNotExist(err) && create:
			if err := os.Mkdir(dir, 0o755); err != nil {
				return errdefs.Internal(err, "unpacking layer")
			}
		case err != nil:
			if os.IsNotExist(err) {
				return invalidEntry(entry, "%q does not exist in the layer", path.Dir(rel))
			}
			return errdefs.Internal(err, "unpacking layer")
		case !fi.IsDir():
			return invalidEntry(entry, "its parent %q is a symlink or not a directory", path.Join(parts[:len(parts)-1]...))
		}
	}
	return nil
}

func extract(root string, hdr *tar.Header, tr io.Reader, src *srcReader, dirs *[]dirTime) error {
	if hdr.Typeflag == tar.TypeXGlobalHeader {
		return nil
	}
	rel, err := cleanName(hdr.Name)
	if err != nil {
		return err
	}
	if rel == "." {
		return nil // the layer root: at mount time its attributes come from the upper dir
	}
	if err := walkParents(root, rel, hdr.Name, true); err != nil {
		return err
	}
	p := filepath.Join(root, rel)
	base := path.Base(rel)

	// OCI whiteouts, translated to what overlayfs understands.
	if base == ".wh..wh..opq" {
		return sysErr(unix.Lsetxattr(filepath.Dir(p), "trusted.overlay.opaque", []byte("y"), 0))
	}
	if name, ok := strings.CutPrefix(base, ".wh."); ok {
		if name == "" || name == "." || name == ".." {
			return invalidEntry(hdr.Name, "a whiteout must name a file")
		}
		p = filepath.Join(filepath.Dir(p), name)
		if err := os.RemoveAll(p); err != nil {
			return errdefs.Internal(err, "unpacking layer")
		}
		return sysErr(unix.Mknod(p, unix.S_IFCHR, 0))
	}

	// An entry replaces what is there, except that a directory merges into a
	// directory (its parent may have been made implicitly).
	if fi, err := os.Lstat(p); err == nil && !(fi.IsDir() && hdr.Typeflag == tar.TypeDir) {
		if err := os.RemoveAll(p); err != nil {
			return errdefs.Internal(err, "unpacking layer")
		}
	}

	mode := uint32(hdr.Mode & 0o7777)
	switch hdr.Typeflag {
	case tar.TypeDir:
		if err := os.Mkdir(p, 0o700); err != nil && !os.IsExist(err) {
			return errdefs.Internal(err, "unpacking layer")
		}
	case tar.TypeReg, tar.TypeGNUSparse:
		// A sparse entry expands its holes to zeros on write: a few KiB of
		// tar could claim terabytes and fill the host's disk. Image tools
		// never write sparse entries, so refuse them.
		if isSparse(hdr) {
			return invalidEntry(hdr.Name, "sparse files are not supported")
		}
		if err := writeFile(p, tr, src); err != nil {
			return err
		}
	case tar.TypeSymlink:
		if err := os.Symlink(hdr.Linkname, p); err != nil {
			return errdefs.Internal(err, "unpacking layer")
		}
	case tar.TypeLink:
		target, err := cleanName(hdr.Linkname)
		if err != nil {
			return err
		}
		// link(2) does not follow a final symlink, but it does follow parents.
		if err := walkParents(root, target, hdr.Name, false); err != nil {
			return err
		}
		if err := os.Link(filepath.Join(root, target), p); err != nil {
			return invalidEntry(hdr.Name, "hard link to %q: %v", hdr.Linkname, err)
		}
		return nil // it shares the target's inode and metadata
	case tar.TypeChar, tar.TypeBlock:
		// A device node in an image would give a sandbox (or a host tool
		// that walks the layer) a device the operator never granted. The
		// runtime mounts a /dev of its own over the image's, so the nodes a
		// root filesystem tar carries there (debootstrap's) are never seen
		// and are not made; anywhere else one is refused.
		if strings.HasPrefix(rel, "dev/") {
			return nil
		}
		return invalidEntry(hdr.Name, "device nodes are not allowed in an image (only under /dev, which the sandbox's own /dev hides, and those are not made)")
	case tar.TypeFifo:
		if err := unix.Mknod(p, unix.S_IFIFO|mode, 0); err != nil {
			return errdefs.Internal(err, "unpacking layer: mknod %s", rel)
		}
	default:
		return invalidEntry(hdr.Name, "unsupported tar entry type %q", hdr.Typeflag)
	}

	// chown before chmod: chown clears setuid and setgid bits.
	if err := unix.Lchown(p, hdr.Uid, hdr.Gid); err != nil {
		return errdefs.Internal(err, "unpacking layer: chown %s", rel)
	}
	if hdr.Typeflag != tar.TypeSymlink {
		if err := unix.Fchmodat(unix.AT_FDCWD, p, mode, 0); err != nil {
			return errdefs.Internal(err, "unpacking layer: chmod %s", rel)
		}
	}
	for k, v := range hdr.PAXRecords {
		name, ok := strings.CutPrefix(k, "SCHILY.xattr.")
		// overlay's own xattrs from an image could redirect lookups; only
		// whiteout handling above may set them.
		if !ok || strings.HasPrefix(name, "trusted.overlay.") {
			continue
		}
		if err := unix.Lsetxattr(p, name, []byte(v), 0); err != nil {
			return errdefs.Internal(err, "unpacking layer: setting xattr %s on %s", name, rel)
		}
	}
	atime := hdr.AccessTime
	if atime.IsZero() {
		atime = hdr.ModTime
	}
	if hdr.Typeflag == tar.TypeDir {
		*dirs = append(*dirs, dirTime{p, atime, hdr.ModTime})
		return nil
	}
	return setTimes(p, atime, hdr.ModTime)
}

// isSparse reports whether hdr is a GNU sparse entry, old-style or PAX.
func isSparse(hdr *tar.Header) bool {
	if hdr.Typeflag == tar.TypeGNUSparse {
		return true
	}
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

func writeFile(p string, tr io.Reader, src *srcReader) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return errdefs.Internal(err, "unpacking layer")
	}
	_, err = io.Copy(f, tr)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if src.err != nil || errors.Is(err, io.ErrUnexpectedEOF) {
			return &readError{err}
		}
		return errdefs.Internal(err, "unpacking layer")
	}
	return nil
}

func setTimes(p string, atime, mtime time.Time) error {
	ts := []unix.Timespec{
		{Sec: atime.Unix(), Nsec: int64(atime.Nanosecond())},
		{Sec: mtime.Unix(), Nsec: int64(mtime.Nanosecond())},
	}
	return sysErr(unix.UtimesNanoAt(unix.AT_FDCWD, p, ts, unix.AT_SYMLINK_NOFOLLOW))
}

func sysErr(err error) error {
	if err != nil {
		return errdefs.Internal(err, "unpacking layer")
	}
	return nil
}
