// Package dirtar copies a directory tree as a tar stream: Write streams a
// directory out, Extract unpacks a stream into a directory without letting
// any entry land outside it. The agent serves both for the files/tar routes;
// the SDK uses them on the caller's machine for UploadDir and DownloadDir.
//
// Unlike treetar, which restores trees sbx owns exactly (owners, xattrs,
// devices) into an empty directory, dirtar takes tars made by people and
// their tools: it merges into an existing directory, makes parents a tar
// leaves out, reads gzip, ignores owners (so it works unprivileged on the
// caller's machine) and refuses devices and fifos.
package dirtar

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sbxhq/sbx/wire"
)

// TempPrefix starts the name of every temporary file or directory the
// toolbox makes while writing (upload temp files, the tar staging
// directory); Write skips such names and file watches ignore them.
const TempPrefix = ".sbx-upload-"

// Error is a tar stream refused for what it holds. Code is one of the API's
// TAR_ codes: wire.CodeTarUnsafePath (absolute, "..", or below a symlink),
// wire.CodeTarUnsupportedEntry (device, fifo or other special entry),
// wire.CodeTarInvalid (not a tar stream, or cut short) or
// wire.CodeTarConflict (a file in the tar where a directory exists). Name is
// the offending entry ("" for the stream).
type Error struct {
	Code      wire.Code
	Name, Msg string
}

func (e *Error) Error() string {
	if e.Name == "" {
		return e.Msg
	}
	return fmt.Sprintf("tar entry %q: %s", e.Name, e.Msg)
}

// Write streams the tree under dir as a tar, names relative to dir.
// Directories, regular files and symlinks (as links, never followed) are
// copied; sockets, fifos and devices are skipped without being opened.
// Like tar --one-file-system, the contents of a directory on another
// filesystem (a mount point such as /proc under /) are left out.
// A file that shrinks while it is read is padded with zeros, as GNU tar does.
func Write(w io.Writer, dir string) error {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	rootInfo, err := os.Stat(root)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if p == root {
			return err
		}
		if err != nil || strings.HasPrefix(d.Name(), TempPrefix) {
			return skip(d) // vanished or unreadable meanwhile, or ours
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		var link string
		switch {
		case fi.Mode().IsRegular(), fi.IsDir():
		case fi.Mode()&fs.ModeSymlink != 0:
			if link, err = os.Readlink(p); err != nil {
				return nil
			}
		default:
			return nil
		}
		hdr, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		hdr.Name = filepath.ToSlash(rel)
		if fi.IsDir() {
			hdr.Name += "/"
		}
		if !fi.Mode().IsRegular() {
			if err := tw.WriteHeader(hdr); err != nil || !fi.IsDir() || sameDevice(fi, rootInfo) {
				return err
			}
			return fs.SkipDir
		}
		f, err := os.OpenFile(p, os.O_RDONLY|readFlags, 0)
		if err != nil {
			return nil
		}
		defer f.Close()
		if now, err := f.Stat(); err != nil || !now.Mode().IsRegular() {
			return nil
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = io.CopyN(tw, io.MultiReader(io.LimitReader(f, hdr.Size), zeros{}), hdr.Size)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

func skip(d fs.DirEntry) error {
	if d != nil && d.IsDir() {
		return fs.SkipDir
	}
	return nil
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// Extract unpacks the tar stream r (plain or gzip-compressed) into dir,
// which must exist. Entries are unpacked into a staging directory inside
// dir and moved into place only once the whole stream was read and checked,
// so a refused or cut stream changes nothing in dir. An entry named with an
// absolute path or "..", or one that would land below a symlink, is refused
// with an *Error (wire.CodeTarUnsafePath). Existing files are replaced; an existing
// symlink or file where the tar has a directory is replaced by the
// directory, never followed. Ownership in the tar is ignored.
func Extract(r io.Reader, dir string) error {
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return &Error{Code: wire.CodeTarInvalid, Msg: "bad gzip stream: " + err.Error()}
		}
		r = zr
	} else {
		r = br
	}
	staging, err := os.MkdirTemp(dir, TempPrefix+"tar-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(staging)
	dirModes, err := unpack(tar.NewReader(r), staging)
	if err != nil {
		return err
	}
	if err := checkConflicts(staging, dir); err != nil {
		return err
	}
	if err := merge(staging, dir); err != nil {
		return err
	}
	// Directory modes last, deepest first, so a read-only directory does
	// not stop its own contents from being written.
	names := make([]string, 0, len(dirModes))
	for n := range dirModes {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, n := range names {
		p := filepath.Join(dir, n)
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			os.Chmod(p, dirModes[n])
		}
	}
	return nil
}

// unpack writes every entry of tr below staging and returns the modes of
// the directories it named.
func unpack(tr *tar.Reader, staging string) (map[string]fs.FileMode, error) {
	dirModes := map[string]fs.FileMode{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return dirModes, nil
		}
		if err != nil {
			return nil, &Error{Code: wire.CodeTarInvalid, Msg: "reading the tar stream: " + err.Error()}
		}
		name, err := entryName(hdr.Name)
		if err != nil || name == "" {
			if err != nil {
				return nil, err
			}
			continue // the root itself ("./")
		}
		if err := mkParents(staging, name); err != nil {
			return nil, err
		}
		p := filepath.Join(staging, filepath.FromSlash(name))
		mode := hdr.FileInfo().Mode()
		switch hdr.Typeflag {
		case tar.TypeDir:
			if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
				// named again: keep it
			} else if err := replace(p, func() error { return os.Mkdir(p, 0o700) }); err != nil {
				return nil, err
			}
			dirModes[name] = mode & (fs.ModePerm | fs.ModeSetgid | fs.ModeSticky)
		case tar.TypeReg, tar.TypeRegA:
			if err := replace(p, func() error { return writeFile(p, tr, mode) }); err != nil {
				return nil, err
			}
		case tar.TypeSymlink:
			if err := replace(p, func() error { return os.Symlink(hdr.Linkname, p) }); err != nil {
				return nil, err
			}
		case tar.TypeLink:
			target, err := entryName(hdr.Linkname)
			if err != nil || target == "" {
				return nil, &Error{Code: wire.CodeTarUnsafePath, Name: hdr.Name, Msg: "hard link target " + hdr.Linkname + " is outside the directory"}
			}
			tp := filepath.Join(staging, filepath.FromSlash(target))
			if fi, err := os.Lstat(tp); err != nil || !fi.Mode().IsRegular() || mkParents(staging, target) != nil {
				return nil, &Error{Code: wire.CodeTarUnsafePath, Name: hdr.Name, Msg: "hard link target " + hdr.Linkname + " is not a file earlier in the tar"}
			}
			if err := replace(p, func() error { return os.Link(tp, p) }); err != nil {
				return nil, err
			}
		case tar.TypeXGlobalHeader:
		default:
			return nil, &Error{Code: wire.CodeTarUnsupportedEntry, Name: hdr.Name, Msg: "only directories, regular files, symlinks and hard links can be extracted"}
		}
	}
}

// entryName checks and cleans a tar name: relative, slash-separated, no "..".
// The root itself comes back as "".
func entryName(raw string) (string, error) {
	if raw == "" || strings.ContainsRune(raw, 0) || path.IsAbs(raw) || strings.HasPrefix(raw, `\`) {
		return "", &Error{Code: wire.CodeTarUnsafePath, Name: raw, Msg: "absolute or empty names are refused: names must be relative to the directory"}
	}
	name := path.Clean(raw)
	if name == ".." || strings.HasPrefix(name, "../") {
		return "", &Error{Code: wire.CodeTarUnsafePath, Name: raw, Msg: `names that climb out with ".." are refused`}
	}
	if name == "." {
		return "", nil
	}
	return name, nil
}

// mkParents makes the directories above name inside staging, refusing to
// pass through anything but a real directory (a symlink the tar made).
func mkParents(staging, name string) error {
	p := staging
	for _, part := range strings.Split(path.Dir(name), "/") {
		if part == "." {
			break
		}
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// Not named in the tar: the usual mode, as tar makes it.
			if err := os.Mkdir(p, 0o755); err != nil {
				return err
			}
		case err != nil:
			return err
		case !fi.IsDir():
			return &Error{Code: wire.CodeTarUnsafePath, Name: name, Msg: "it would be written below a symlink or a file, which is refused"}
		}
	}
	return nil
}

// replace runs create, first removing what an earlier entry of the same
// name left (a tar may name a path twice; the last one wins).
func replace(p string, create func() error) error {
	if fi, err := os.Lstat(p); err == nil {
		if fi.IsDir() {
			if err := os.RemoveAll(p); err != nil {
				return err
			}
		} else if err := os.Remove(p); err != nil {
			return err
		}
	}
	return create()
}

func writeFile(p string, r io.Reader, mode fs.FileMode) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	src := &readErr{r: r}
	if _, err := io.Copy(f, src); err != nil {
		f.Close()
		if src.err != nil { // the stream, not the disk
			return &Error{Code: wire.CodeTarInvalid, Msg: "reading the tar stream: " + src.err.Error()}
		}
		return err
	}
	// Chmod sets the mode exactly, without the umask.
	if err := f.Chmod(mode & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readErr remembers a failed read, to tell a bad stream from a full disk.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// checkConflicts refuses, before anything moves, a non-directory in the
// tar where dir has a directory (GNU tar refuses the same).
func checkConflicts(staging, dir string) error {
	return filepath.WalkDir(staging, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == staging {
			return err
		}
		rel, _ := filepath.Rel(staging, p)
		fi, err := os.Lstat(filepath.Join(dir, rel))
		switch {
		case err != nil:
			return skip(d) // new: moved as a whole
		case fi.IsDir() && !d.IsDir():
			return &Error{Code: wire.CodeTarConflict, Name: filepath.ToSlash(rel), Msg: "it is a directory in " + dir + " but not in the tar"}
		case !fi.IsDir():
			return skip(d) // replaced as a whole
		}
		return nil
	})
}

// merge moves the staged tree into dir: what dir lacks is renamed in whole,
// directories present in both are merged, anything else is replaced.
func merge(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		s, d := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		fi, err := os.Lstat(d)
		switch {
		case err == nil && e.IsDir() && fi.IsDir():
			if err := merge(s, d); err != nil {
				return err
			}
			continue
		case err == nil && e.IsDir():
			// A file or symlink where the tar has a directory: replace
			// it rather than follow it.
			if err := os.Remove(d); err != nil {
				return err
			}
		}
		if err := os.Rename(s, d); err != nil {
			return err
		}
	}
	return nil
}
