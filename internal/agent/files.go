package agent

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/dirtar"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/wire"
)

// The agent runs inside the instance's root, so no path here can reach a host
// file; still, every path is cleaned and used with plain os calls only.

// uploadPrefix names temporary upload files, renamed into place when
// complete. An upload that creates a file writes uploadPrefix+"new-…", one
// that replaces a file uploadPrefix+"old-…", so a watch can report the
// rename as the create or write that it is (see watch.go).
const (
	uploadPrefix    = dirtar.TempPrefix
	uploadNewPrefix = uploadPrefix + "new-"
)

// Recursive listing is bounded: depth at most maxListDepth, and past
// maxListEntries the answer is an error (LIST_TOO_LARGE) rather than a
// silently cut list.
const maxListDepth = 32

var maxListEntries = 50_000 // a variable for tests

// path resolves p, absolute or relative to the default working directory.
func (s *server) path(p string) (string, error) {
	if p == "" || strings.ContainsRune(p, 0) {
		return "", errdefs.Invalid(wire.CodeInvalidPath, "path must be non-empty and must not contain NUL bytes")
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.cwd, p)
	}
	return filepath.Clean(p), nil
}

// parseMode parses octal permission bits such as "0644" or "755".
func parseMode(v string) (os.FileMode, error) {
	n, err := strconv.ParseUint(v, 8, 32)
	if err != nil || n > 0o7777 {
		return 0, errdefs.Invalid(wire.CodeInvalidMode, "mode must be octal permission bits such as 0644, got %q", v)
	}
	m := os.FileMode(n & 0o777)
	if n&unix.S_ISUID != 0 {
		m |= os.ModeSetuid
	}
	if n&unix.S_ISGID != 0 {
		m |= os.ModeSetgid
	}
	if n&unix.S_ISVTX != 0 {
		m |= os.ModeSticky
	}
	return m, nil
}

func modeString(m os.FileMode) string {
	n := uint32(m.Perm())
	if m&os.ModeSetuid != 0 {
		n |= unix.S_ISUID
	}
	if m&os.ModeSetgid != 0 {
		n |= unix.S_ISGID
	}
	if m&os.ModeSticky != 0 {
		n |= unix.S_ISVTX
	}
	return fmt.Sprintf("%04o", n)
}

// fileInfo describes path with a fresh Lstat.
func fileInfo(path string) (wire.FileInfo, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return wire.FileInfo{}, fsError(err, path)
	}
	info := wire.FileInfo{
		Name: fi.Name(), Path: path, Size: fi.Size(),
		Mode: modeString(fi.Mode()), ModTime: fi.ModTime().UTC(), Type: "other",
	}
	info.Owner, info.Group = ownerNames(fi) // fileops.go
	switch {
	case fi.Mode().IsRegular():
		info.Type = "file"
	case fi.IsDir():
		info.Type = "dir"
	case fi.Mode()&os.ModeSymlink != 0:
		info.Type = "symlink"
		info.Target, _ = os.Readlink(path)
	}
	return info, nil
}

// fsError turns an os error into the errdefs error a caller can act on.
func fsError(err error, path string) error { return errdefs.FS(err, path) }

// putFile streams the body into a temporary file next to path and
// renames it into place, so a failed upload leaves the old file untouched.
// A symlink at path is written through (the link stays), as Daytona does.
// Missing parent directories are made unless parents=false.
func (s *server) putFile(r *http.Request) (wire.FileInfo, error) {
	up, err := s.startUpload(r)
	if err != nil {
		return wire.FileInfo{}, err
	}
	defer up.abort()
	body := &readErrRecorder{r: r.Body}
	if _, err := io.Copy(up.tmp, body); err != nil {
		if body.err != nil {
			return wire.FileInfo{}, errdefs.Invalid(wire.CodeUploadIncomplete, "reading the upload of %s failed: %v", up.path, body.err)
		}
		return wire.FileInfo{}, fsError(err, up.path)
	}
	return up.finish()
}

// upload is a file being uploaded: tmp, next to path, is renamed over it
// by finish with the mode the upload gets.
type upload struct {
	path string
	tmp  *os.File
	mode os.FileMode
	done bool
}

// startUpload checks ?path=, ?mode= and ?parents= and makes the temporary
// file the upload's bytes go into (putFile, files_fd.go).
func (s *server) startUpload(r *http.Request) (*upload, error) {
	path, err := s.path(r.URL.Query().Get("path"))
	if err != nil {
		return nil, err
	}
	parents, err := parentsParam(r)
	if err != nil {
		return nil, err
	}
	if path, err = writeTarget(path); err != nil {
		return nil, err
	}
	mode := os.FileMode(0o644)
	modeSet := r.URL.Query().Has("mode")
	if modeSet {
		if mode, err = parseMode(r.URL.Query().Get("mode")); err != nil {
			return nil, err
		}
	}
	old, oldErr := os.Lstat(path)
	switch {
	case oldErr == nil && old.IsDir():
		return nil, errdefs.Conflict(wire.CodeIsADirectory, "%s is a directory", path)
	case oldErr == nil && old.Mode().IsRegular() && !modeSet:
		mode = old.Mode() & (fs.ModePerm | os.ModeSetuid | os.ModeSetgid | os.ModeSticky)
	}
	dir := filepath.Dir(path)
	if err := ensureDir(dir, parents); err != nil {
		return nil, err
	}
	prefix := uploadPrefix + "old-"
	if oldErr != nil {
		prefix = uploadNewPrefix
	}
	tmp, err := os.CreateTemp(dir, prefix+"*")
	if err != nil {
		return nil, fsError(err, dir)
	}
	return &upload{path: path, tmp: tmp, mode: mode}, nil
}

// finish gives the complete file its mode and renames it into place.
func (u *upload) finish() (wire.FileInfo, error) {
	if err := u.tmp.Chmod(u.mode); err != nil {
		return wire.FileInfo{}, fsError(err, u.path)
	}
	if err := u.tmp.Close(); err != nil {
		return wire.FileInfo{}, fsError(err, u.path)
	}
	if err := os.Rename(u.tmp.Name(), u.path); err != nil {
		return wire.FileInfo{}, fsError(err, u.path)
	}
	u.done = true
	return fileInfo(u.path)
}

// abort removes the temporary file of an upload that did not finish.
func (u *upload) abort() {
	if !u.done {
		u.tmp.Close()
		os.Remove(u.tmp.Name())
		u.done = true
	}
}

// parentsParam reads parents: true unless the caller says parents=false.
func parentsParam(r *http.Request) (bool, error) {
	if !r.URL.Query().Has("parents") {
		return true, nil
	}
	return httpjson.BoolParam(r, "parents")
}

// ensureDir makes sure dir is a directory, making it and its parents when
// parents is set.
func ensureDir(dir string, parents bool) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist) && parents:
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fsError(err, dir)
		}
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return errdefs.NotFound(wire.CodeParentNotFound, "directory %s does not exist (parents=false was given)", dir)
	case err != nil:
		return fsError(err, dir)
	case !fi.IsDir():
		return errdefs.Invalid(wire.CodeNotADirectory, "%s is not a directory", dir)
	}
	return nil
}

// writeTarget follows the symlinks at path to the file an upload writes,
// so the link itself stays. The agent runs inside the sandbox's root, so
// an absolute or ".." target resolves inside it, as every other path does.
func writeTarget(path string) (string, error) {
	for range 40 {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			return path, nil // a dangling link's target is created
		}
		target, err := os.Readlink(path)
		if err != nil {
			return "", fsError(err, path)
		}
		if !filepath.IsAbs(target) {
			// Relative to where the link really is: its directory may
			// itself be reached through a link.
			dir, err := filepath.EvalSymlinks(filepath.Dir(path))
			if err != nil {
				return "", fsError(err, path)
			}
			target = filepath.Join(dir, target)
		}
		path = filepath.Clean(target)
	}
	return "", errdefs.Invalid(wire.CodeInvalidPath, "%s: too many levels of symlinks", path)
}

// readErrRecorder tells a failed read of the body from a failed disk write.
type readErrRecorder struct {
	r   io.Reader
	err error
}

func (e *readErrRecorder) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

func (s *server) handleGetFile(w http.ResponseWriter, r *http.Request) {
	f, size, err := s.openDownload(r)
	if err != nil {
		writeError(w, err)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	w.WriteHeader(http.StatusOK)
	io.CopyN(w, f, size)
}

// openDownload opens the regular file at ?path= for a download
// (handleGetFile, files_fd.go) and returns its size.
func (s *server) openDownload(r *http.Request) (*os.File, int64, error) {
	path, err := s.path(r.URL.Query().Get("path"))
	if err != nil {
		return nil, 0, err
	}
	// Refuse special files before opening them: opening a socket fails
	// and a device may have effects. O_NONBLOCK covers a swap meanwhile:
	// opening a FIFO must not hang; fstat then rejects it.
	if fi, err := os.Stat(path); err == nil && !fi.IsDir() && !fi.Mode().IsRegular() {
		return nil, 0, errdefs.Invalid(wire.CodeNotARegularFile, "%s is not a regular file (a %s)", path, fileKind(fi.Mode()))
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, fsError(err, path)
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
		err = fsError(err, path)
	case fi.IsDir():
		err = errdefs.Invalid(wire.CodeIsADirectory, "%s is a directory; list it with /files/list", path)
	case !fi.Mode().IsRegular():
		err = errdefs.Invalid(wire.CodeNotARegularFile, "%s is not a regular file", path)
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// fileKind names a special file's type for an error message.
func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeNamedPipe != 0:
		return "fifo"
	case m&os.ModeCharDevice != 0:
		return "character device"
	case m&os.ModeDevice != 0:
		return "block device"
	}
	return "special file"
}

// list lists a directory; depth=N also lists N-1 levels below it
// (symlinked directories are listed, not entered), each directory's
// entries by name, each followed by its own contents.
func (s *server) list(r *http.Request) ([]wire.FileInfo, error) {
	path, err := s.path(r.URL.Query().Get("path"))
	if err != nil {
		return nil, err
	}
	depth := 1
	if v := r.URL.Query().Get("depth"); v != "" {
		if depth, err = strconv.Atoi(v); err != nil || depth < 1 || depth > maxListDepth {
			return nil, errdefs.Invalid(wire.CodeInvalidDepth, "depth must be a whole number from 1 to %d, got %q", maxListDepth, v)
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fsError(err, path)
	}
	if !fi.IsDir() {
		return nil, errdefs.Invalid(wire.CodeNotADirectory, "%s is not a directory", path)
	}
	list := []wire.FileInfo{}
	if err := listTree(path, depth, &list); err != nil {
		return nil, err
	}
	return list, nil
}

func listTree(dir string, depth int, list *[]wire.FileInfo) error {
	entries, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		return fsError(err, dir)
	}
	for _, e := range entries {
		info, err := fileInfo(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // removed since ReadDir
		}
		if len(*list) == maxListEntries {
			return errdefs.Invalid(wire.CodeListTooLarge, "the listing has more than %d entries: list a smaller depth or a subdirectory", maxListEntries)
		}
		*list = append(*list, info)
		if depth > 1 && info.Type == "dir" {
			if err := listTree(info.Path, depth-1, list); err != nil && errdefs.CodeOf(err) == wire.CodeListTooLarge {
				return err
			}
			// Otherwise unreadable or gone meanwhile: listed, not entered.
		}
	}
	return nil
}

func (s *server) handleStat(w http.ResponseWriter, r *http.Request) {
	path, err := s.path(r.URL.Query().Get("path"))
	if err == nil {
		var info wire.FileInfo
		if info, err = fileInfo(path); err == nil {
			writeJSON(w, http.StatusOK, info)
			return
		}
	}
	writeError(w, err)
}

func (s *server) handleMkdir(w http.ResponseWriter, r *http.Request) {
	info, err := s.mkdir(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, info)
}

func (s *server) mkdir(w http.ResponseWriter, r *http.Request) (wire.FileInfo, error) {
	var req wire.MkdirRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return wire.FileInfo{}, err
	}
	path, err := s.path(req.Path)
	if err != nil {
		return wire.FileInfo{}, err
	}
	mode := os.FileMode(0o755)
	if req.Mode != "" {
		if mode, err = parseMode(req.Mode); err != nil {
			return wire.FileInfo{}, err
		}
	}
	return makeDir(path, mode, req.Parents)
}

// makeDir makes the directory path with mode (parents too with parents);
// with parents an existing directory is no error.
func makeDir(path string, mode os.FileMode, parents bool) (wire.FileInfo, error) {
	var err error
	if parents {
		if fi, err := os.Stat(path); err == nil {
			if fi.IsDir() {
				return fileInfo(path)
			}
			return wire.FileInfo{}, errdefs.Conflict(wire.CodeFileExists, "%s exists and is not a directory", path)
		}
		err = os.MkdirAll(path, 0o755)
	} else {
		err = os.Mkdir(path, 0o755)
		if errors.Is(err, fs.ErrNotExist) {
			return wire.FileInfo{}, errdefs.NotFound(wire.CodeParentNotFound, "directory %s does not exist (use parents:true to create it)", filepath.Dir(path))
		}
	}
	if err != nil {
		return wire.FileInfo{}, fsError(err, path)
	}
	// Chmod sets the mode exactly, without the umask.
	if err := os.Chmod(path, mode); err != nil {
		return wire.FileInfo{}, fsError(err, path)
	}
	return fileInfo(path)
}

func (s *server) handleMove(w http.ResponseWriter, r *http.Request) {
	info, err := s.move(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, info)
}

func (s *server) move(w http.ResponseWriter, r *http.Request) (wire.FileInfo, error) {
	var req wire.MoveRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return wire.FileInfo{}, err
	}
	from, err := s.path(req.From)
	if err != nil {
		return wire.FileInfo{}, err
	}
	to, err := s.path(req.To)
	if err != nil {
		return wire.FileInfo{}, err
	}
	if from == "/" || to == "/" {
		return wire.FileInfo{}, errdefs.Invalid(wire.CodeInvalidPath, "cannot move / or onto /")
	}
	if _, err := os.Lstat(from); err != nil {
		return wire.FileInfo{}, fsError(err, from)
	}
	// rename(2) directly: os.Rename refuses to replace even an empty directory.
	if req.Overwrite {
		err = syscall.Rename(from, to)
	} else {
		// RENAME_NOREPLACE checks and renames in one step; fall back where
		// the filesystem lacks it.
		err = unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
		if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSYS) {
			if _, lerr := os.Lstat(to); lerr == nil {
				err = syscall.EEXIST
			} else {
				err = syscall.Rename(from, to)
			}
		}
	}
	switch {
	case err == nil:
		return fileInfo(to)
	case errors.Is(err, syscall.EEXIST) && !req.Overwrite:
		return wire.FileInfo{}, errdefs.Conflict(wire.CodeFileExists, "%s already exists (set overwrite to replace it)", to)
	case errors.Is(err, fs.ErrNotExist):
		return wire.FileInfo{}, errdefs.NotFound(wire.CodeParentNotFound, "directory %s does not exist", filepath.Dir(to))
	case errors.Is(err, syscall.EINVAL):
		return wire.FileInfo{}, errdefs.Invalid(wire.CodeInvalidMove, "cannot move %s into itself", from)
	case errors.Is(err, syscall.EEXIST), errors.Is(err, syscall.ENOTEMPTY):
		return wire.FileInfo{}, errdefs.Conflict(wire.CodeDirNotEmpty, "%s is a directory that is not empty", to)
	case errors.Is(err, syscall.ENOTDIR):
		return wire.FileInfo{}, errdefs.Conflict(wire.CodeNotADirectory, "cannot replace %s: a directory and a non-directory", to)
	}
	return wire.FileInfo{}, fsError(err, to)
}

func (s *server) handleDelete(w http.ResponseWriter, r *http.Request) {
	if err := s.delete(r); err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *server) delete(r *http.Request) error {
	path, err := s.path(r.URL.Query().Get("path"))
	if err != nil {
		return err
	}
	recursive, err := httpjson.BoolParam(r, "recursive")
	if err != nil {
		return err
	}
	if path == "/" {
		return errdefs.Invalid(wire.CodeInvalidPath, "refusing to delete /")
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return fsError(err, path)
	}
	if recursive && fi.IsDir() {
		err = os.RemoveAll(path)
	} else {
		err = os.Remove(path)
	}
	if errors.Is(err, syscall.EEXIST) || errors.Is(err, syscall.ENOTEMPTY) {
		return errdefs.Conflict(wire.CodeDirNotEmpty, "%s is not empty (set recursive=true to delete it and its contents)", path)
	}
	if err != nil {
		return fsError(err, path)
	}
	return nil
}
