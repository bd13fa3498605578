package agent

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Writes and directories made for an account of the sandbox (?owner=name,
// uid or uid:gid): the agent runs as root, and a file written for a user
// must be the user's to change, as are the parent directories the write
// made. The file's mode and parents work as for PutFile and Mkdir.

// ownedTarget resolves ?path= and ?owner= (to the uid and gid to hand
// what is made to).
func (s *server) ownedTarget(r *http.Request) (path string, uid, gid int, err error) {
	spec := r.URL.Query().Get("owner")
	if spec == "" {
		return "", 0, 0, errdefs.Invalid(wire.CodeInvalidParameter, "owner is required: an account name, uid or uid:gid")
	}
	cred, _, err := lookupUser(spec)
	if err != nil {
		return "", 0, 0, err
	}
	path, err = s.path(r.URL.Query().Get("path"))
	return path, int(cred.Uid), int(cred.Gid), err
}

// missingDirs lists dir and those of its parents that do not exist yet,
// outermost first.
func missingDirs(dir string) []string {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		missing = append([]string{d}, missing...)
		if d == filepath.Dir(d) {
			break
		}
	}
	return missing
}

// chownAll hands paths to uid:gid without following a last-component link.
func chownAll(paths []string, uid, gid int) error {
	for _, p := range paths {
		if err := os.Lchown(p, uid, gid); err != nil {
			return fsError(err, p)
		}
	}
	return nil
}

// putFileOwned is PutFile for ?owner=: the file and the directories the
// write made belong to the owner.
func (s *server) putFileOwned(r *http.Request) (wire.FileInfo, error) {
	path, uid, gid, err := s.ownedTarget(r)
	if err != nil {
		return wire.FileInfo{}, err
	}
	made := missingDirs(filepath.Dir(path))
	info, err := s.putFile(r)
	if err != nil {
		return wire.FileInfo{}, err
	}
	target, err := writeTarget(path)
	if err != nil {
		return wire.FileInfo{}, err
	}
	if err := chownAll(append(made, target), uid, gid); err != nil {
		return wire.FileInfo{}, err
	}
	return fileInfo(info.Path)
}

// mkdirOwned makes ?path= (with ?mode=, default 0755, and ?parents=,
// default true) and hands the directories it made to ?owner=.
func (s *server) mkdirOwned(r *http.Request) (wire.FileInfo, error) {
	path, uid, gid, err := s.ownedTarget(r)
	if err != nil {
		return wire.FileInfo{}, err
	}
	mode := os.FileMode(0o755)
	if v := r.URL.Query().Get("mode"); v != "" {
		if mode, err = parseMode(v); err != nil {
			return wire.FileInfo{}, err
		}
	}
	parents, err := parentsParam(r)
	if err != nil {
		return wire.FileInfo{}, err
	}
	made := missingDirs(path)
	info, err := makeDir(path, mode, parents)
	if err != nil {
		return wire.FileInfo{}, err
	}
	if err := chownAll(made, uid, gid); err != nil {
		return wire.FileInfo{}, err
	}
	return info, nil
}
