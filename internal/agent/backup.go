package agent

import (
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/treetar"
	"github.com/sbxhq/sbx/wire"
)

// Directory backups: the agent packs and unpacks them with treetar inside
// the sandbox, so owners are the sandbox's own ids (its user namespace and
// volumes included), whatever host ids it runs as.

// handlePackDir streams the directory at path as a treetar stream. An error
// after the stream started aborts the connection: the daemon sees a cut
// stream, never a complete-looking one.
func (s *server) handlePackDir(w http.ResponseWriter, r *http.Request) {
	s.streamDir(w, r, "a backup is of a directory", treetar.Pack)
}

// unpackDir restores a treetar stream into a staging directory beside path
// and renames it into place once the whole stream is in: path must be
// missing or an empty directory, and a refused or cut stream leaves
// nothing.
func (s *server) unpackDir(r *http.Request) (wire.FileInfo, error) {
	path, err := s.path(r.URL.Query().Get("path"))
	if err != nil {
		return wire.FileInfo{}, err
	}
	if path == "/" {
		return wire.FileInfo{}, errdefs.Invalid(wire.CodeInvalidPath, "cannot restore a backup over /")
	}
	switch entries, err := os.ReadDir(path); {
	case err == nil && len(entries) > 0:
		return wire.FileInfo{}, errdefs.Conflict(wire.CodeBackupTargetNotEmpty, "%s is not empty: restore into a missing or empty directory", path)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return wire.FileInfo{}, fsError(err, path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return wire.FileInfo{}, fsError(err, filepath.Dir(path))
	}
	staging, err := os.MkdirTemp(filepath.Dir(path), agentapi.RestoreStaging)
	if err != nil {
		return wire.FileInfo{}, fsError(err, filepath.Dir(path))
	}
	defer os.RemoveAll(staging) // gone after the rename
	body := &readErrRecorder{r: r.Body}
	if err := treetar.Unpack(body, staging); err != nil {
		if body.err != nil {
			return wire.FileInfo{}, errdefs.Invalid(wire.CodeUploadIncomplete, "reading the backup into %s failed: %v; nothing was restored", path, body.err)
		}
		return wire.FileInfo{}, errdefs.Invalid(wire.CodeBackupCorrupt, "the backup does not unpack into %s: %v; nothing was restored", path, err)
	}
	// The daemon checks the backup's digest at the very end of the stream,
	// after the tar's own end: only a body read to its end without error
	// is a good one.
	if _, err := io.Copy(io.Discard, body); err != nil || body.err != nil {
		return wire.FileInfo{}, errdefs.Invalid(wire.CodeUploadIncomplete, "the backup stream for %s broke off at its end; nothing was restored", path)
	}
	os.Remove(path) // an empty directory; Rename does not replace one that is not
	if err := os.Rename(staging, path); err != nil {
		return wire.FileInfo{}, fsError(err, path)
	}
	return fileInfo(path)
}
