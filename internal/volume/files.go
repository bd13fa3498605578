package volume

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// A volume's files, reached from the host without a sandbox (E2B's Volume
// file methods, internal/compat/e2b). Every path is resolved beneath the
// volume's mount point with os.Root (openat2 RESOLVE_BENEATH): neither ".."
// nor a symlink a sandbox left in the volume leads outside it. Writes land
// in the volume's own filesystem, so its size (which the team's disk quota
// counts, Create) bounds them: past it they fail with NO_SPACE. Owners are
// the ids sandboxes see (the package comment): 0 is root in every sandbox.

// Entry is one file's metadata.
type Entry struct {
	Name   string    // the last element of Path
	Path   string    // from the volume's root, starting with "/"
	Type   string    // "file", "directory", "symlink" or "unknown"
	Size   int64     // bytes
	Mode   uint32    // permission bits, with setuid, setgid and sticky
	UID    uint32    // the owner as sandboxes see it
	GID    uint32    // the group as sandboxes see it
	Atime  time.Time // last access
	Mtime  time.Time // last change of the content
	Ctime  time.Time // last change of the metadata
	Target string    // a symlink's target, as stored
}

// Attrs are the owner and mode to set on a file; nil leaves one as it is.
type Attrs struct {
	UID, GID *uint32
	Mode     *uint32 // permission bits (0o7777)
}

func (a Attrs) check() error {
	if a.Mode != nil && *a.Mode > 0o7777 {
		return errdefs.Invalid(wire.CodeInvalidParameter, "mode %#o: give permission bits (at most 0o7777)", *a.Mode)
	}
	return nil
}

// Files is one volume's file tree. Close it after use.
type Files struct {
	root *os.Root
}

// Files opens the file tree of the caller's volume name (Get's rules:
// another team's is VOLUME_NOT_FOUND).
func (m *Manager) Files(ctx context.Context, name string) (*Files, error) {
	r, err := m.lookup(ctx, name)
	if err != nil {
		return nil, err
	}
	mnt := filepath.Join(m.dir(r.ID), "mnt")
	// Unmounted, the directory is the host's disk: writes would escape the
	// volume's size.
	if !mounted(mnt) {
		return nil, errdefs.Unavailable(wire.CodeInvalidVolume, "volume %q is not mounted on this host", name)
	}
	return OpenFiles(mnt)
}

// OpenFiles opens the tree at dir as a volume's (Files; tests of callers).
func OpenFiles(dir string) (*Files, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, errdefs.Internal(err, "open volume files")
	}
	return &Files{root: root}, nil
}

// Close releases the tree.
func (f *Files) Close() error { return f.root.Close() }

// rel is p ("/a/b", "a/b", "/" …) relative to the volume's root: "." for
// the root itself. ".." past the root is refused here; os.Root refuses the
// symlinks that would leave it.
func rel(p string) (string, error) {
	r := strings.TrimPrefix(path.Clean("/"+p), "/")
	if r == "" {
		r = "."
	}
	if strings.ContainsRune(p, 0) || !filepath.IsLocal(r) {
		return "", errdefs.Invalid(wire.CodeInvalidPath, "path %q: not a path in the volume", p)
	}
	return r, nil
}

// fail is err of an operation on p as the API reports it.
func fail(err error, p string) error {
	var e *errdefs.Error
	if errors.As(err, &e) {
		return err
	}
	// os.Root's refusal of a path that resolves outside it.
	if strings.Contains(err.Error(), "path escapes from parent") {
		return errdefs.Invalid(wire.CodeInvalidPath, "%s leads outside the volume (through a symlink or ..)", p)
	}
	return errdefs.FS(err, p)
}

// Stat describes p (a symlink itself, not its target).
func (f *Files) Stat(p string) (Entry, error) {
	r, err := rel(p)
	if err != nil {
		return Entry{}, err
	}
	return f.entry(r)
}

func (f *Files) entry(r string) (Entry, error) {
	fi, err := f.root.Lstat(r)
	if err != nil {
		return Entry{}, fail(err, "/"+strings.TrimPrefix(r, "."))
	}
	e := Entry{Name: path.Base("/" + r), Path: path.Clean("/" + r), Size: fi.Size(), Mode: uint32(fi.Mode().Perm()), Mtime: fi.ModTime().UTC(), Type: "unknown"}
	if e.Path == "/" {
		e.Name = "/"
	}
	switch {
	case fi.Mode().IsRegular():
		e.Type = "file"
	case fi.IsDir():
		e.Type = "directory"
	case fi.Mode()&fs.ModeSymlink != 0:
		e.Type = "symlink"
		e.Target, _ = f.root.Readlink(r)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		e.Mode = st.Mode & 0o7777
		e.UID, e.GID = st.Uid, st.Gid
		e.Atime = time.Unix(st.Atim.Unix()).UTC()
		e.Ctime = time.Unix(st.Ctim.Unix()).UTC()
	}
	return e, nil
}

// List describes what directory p holds, depth levels down (1: its
// entries). Symlinks to directories are listed, not followed.
func (f *Files) List(p string, depth int) ([]Entry, error) {
	if depth < 1 {
		return nil, errdefs.Invalid(wire.CodeInvalidParameter, "depth must be 1 or more, got %d", depth)
	}
	r, err := rel(p)
	if err != nil {
		return nil, err
	}
	// The directory itself may be a symlink to one inside the volume.
	if fi, err := f.root.Stat(r); err != nil {
		return nil, fail(err, p)
	} else if !fi.IsDir() {
		return nil, errdefs.Invalid(wire.CodeNotADirectory, "%s is not a directory", p)
	}
	out := []Entry{}
	var walk func(dir string, level int) error
	walk = func(dir string, level int) error {
		d, err := f.root.Open(dir)
		if err != nil {
			return fail(err, "/"+dir)
		}
		names, err := d.Readdirnames(-1)
		d.Close()
		if err != nil {
			return fail(err, "/"+dir)
		}
		for _, n := range names {
			e, err := f.entry(path.Join(dir, n))
			if errdefs.Is(err, errdefs.KindNotFound) {
				continue // removed while listing
			}
			if err != nil {
				return err
			}
			out = append(out, e)
			if e.Type == "directory" && level < depth {
				if err := walk(path.Join(dir, n), level+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(r, 1); err != nil {
		return nil, err
	}
	return out, nil
}

// MakeDir makes directory p with attrs; parents also makes the missing
// directories above it and accepts p existing as a directory.
func (f *Files) MakeDir(p string, parents bool, a Attrs) (Entry, error) {
	r, err := rel(p)
	if err == nil {
		err = a.check()
	}
	if err != nil {
		return Entry{}, err
	}
	if parents {
		err = f.root.MkdirAll(r, 0o755)
	} else {
		err = f.root.Mkdir(r, 0o755)
	}
	if err != nil {
		return Entry{}, fail(err, p)
	}
	return f.SetAttrs(p, a)
}

// Open opens regular file p for reading.
func (f *Files) Open(p string) (io.ReadCloser, error) {
	r, err := rel(p)
	if err != nil {
		return nil, err
	}
	file, err := f.root.Open(r)
	if err != nil {
		return nil, fail(err, p)
	}
	if fi, err := file.Stat(); err != nil || !fi.Mode().IsRegular() {
		file.Close()
		return nil, errdefs.Invalid(wire.CodeNotARegularFile, "%s is not a regular file", p)
	}
	return file, nil
}

// Write stores body as file p, which must not exist unless overwrite. The
// content goes to a file beside it first, renamed into place once whole, so
// a failed write (the volume full) leaves the old file as it was. A new
// file is root's, mode 0644; an overwritten one keeps its owner and mode;
// attrs then apply.
func (f *Files) Write(p string, body io.Reader, overwrite bool, a Attrs) (Entry, error) {
	r, err := rel(p)
	if err == nil {
		err = a.check()
	}
	if err != nil {
		return Entry{}, err
	}
	if r == "." {
		return Entry{}, errdefs.Conflict(wire.CodeIsADirectory, "/ is a directory")
	}
	old, err := f.root.Stat(r)
	switch {
	case err == nil && old.IsDir():
		return Entry{}, errdefs.Conflict(wire.CodeIsADirectory, "%s is a directory", p)
	case err == nil && !overwrite:
		return Entry{}, errdefs.Conflict(wire.CodeFileExists, "%s already exists (force: true overwrites it)", p)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return Entry{}, fail(err, p)
	}
	var id [8]byte
	rand.Read(id[:])
	tmp := path.Join(path.Dir(r), ".sbx-upload-"+hex.EncodeToString(id[:]))
	file, err := f.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return Entry{}, fail(err, p)
	}
	_, err = io.Copy(file, body)
	if err == nil && old != nil {
		if st, ok := old.Sys().(*syscall.Stat_t); ok {
			err = file.Chown(int(st.Uid), int(st.Gid))
			if err == nil {
				err = file.Chmod(old.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky))
			}
		}
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = f.root.Rename(tmp, r)
	}
	if err != nil {
		f.root.Remove(tmp)
		return Entry{}, fail(err, p)
	}
	return f.SetAttrs(p, a)
}

// SetAttrs sets p's owner and mode (of a symlink's target: a symlink has
// neither of its own that matters).
func (f *Files) SetAttrs(p string, a Attrs) (Entry, error) {
	r, err := rel(p)
	if err == nil {
		err = a.check()
	}
	if err != nil {
		return Entry{}, err
	}
	if a.UID != nil || a.GID != nil {
		uid, gid := -1, -1
		if a.UID != nil {
			uid = int(*a.UID)
		}
		if a.GID != nil {
			gid = int(*a.GID)
		}
		if err := f.root.Chown(r, uid, gid); err != nil {
			return Entry{}, fail(err, p)
		}
	}
	if a.Mode != nil {
		m := *a.Mode
		mode := fs.FileMode(m & 0o777)
		for bit, fm := range map[uint32]fs.FileMode{0o4000: fs.ModeSetuid, 0o2000: fs.ModeSetgid, 0o1000: fs.ModeSticky} {
			if m&bit != 0 {
				mode |= fm
			}
		}
		if err := f.root.Chmod(r, mode); err != nil {
			return Entry{}, fail(err, p)
		}
	}
	return f.entry(r)
}

// Remove removes p, a directory with what it holds. The volume's root
// cannot be removed.
func (f *Files) Remove(p string) error {
	r, err := rel(p)
	if err != nil {
		return err
	}
	if r == "." {
		return errdefs.Invalid(wire.CodeInvalidPath, "the volume's root cannot be removed; remove what it holds, or the volume")
	}
	if _, err := f.root.Lstat(r); err != nil {
		return fail(err, p)
	}
	if err := f.root.RemoveAll(r); err != nil {
		return fail(err, p)
	}
	return nil
}
