package agent

import (
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"

	"github.com/sbxhq/sbx/internal/dirtar"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Directories travel as tar streams (see package dirtar for what is copied
// and what is refused).

// handleGetTar streams the directory at path as a tar. An error after the
// stream started aborts the connection, so the client sees a cut stream
// rather than a complete-looking tar.
func (s *server) handleGetTar(w http.ResponseWriter, r *http.Request) {
	s.streamDir(w, r, "download a file with GET /files", dirtar.Write)
}

// streamDir streams the directory named by the path query parameter with
// write; notDir finishes the message when path is not a directory. An error
// after the stream started aborts the connection, so the client sees a cut
// stream rather than a complete-looking one.
func (s *server) streamDir(w http.ResponseWriter, r *http.Request, notDir string, write func(io.Writer, string) error) {
	path, err := s.path(r.URL.Query().Get("path"))
	if err != nil {
		writeError(w, err)
		return
	}
	fi, err := os.Stat(path)
	if err != nil {
		writeError(w, fsError(err, path))
		return
	}
	if !fi.IsDir() {
		writeError(w, errdefs.Invalid(wire.CodeNotADirectory, "%s is not a directory; "+notDir, path))
		return
	}
	w.Header().Set("Content-Type", "application/x-tar")
	w.WriteHeader(http.StatusOK)
	if err := write(w, path); err != nil {
		panic(http.ErrAbortHandler)
	}
}

// putTar extracts a tar stream (plain or gzip) into the directory at
// path, made with its parents unless parents=false. Nothing changes unless
// the whole stream is read and accepted.
func (s *server) putTar(r *http.Request) (wire.FileInfo, error) {
	path, err := s.path(r.URL.Query().Get("path"))
	if err != nil {
		return wire.FileInfo{}, err
	}
	parents, err := parentsParam(r)
	if err != nil {
		return wire.FileInfo{}, err
	}
	_, statErr := os.Stat(path)
	if err := ensureDir(path, parents); err != nil {
		return wire.FileInfo{}, err
	}
	body := &readErrRecorder{r: r.Body}
	if err := dirtar.Extract(body, path); err != nil {
		if errors.Is(statErr, fs.ErrNotExist) {
			os.Remove(path) // made for this upload: gone again
		}
		var te *dirtar.Error
		switch {
		case body.err != nil:
			return wire.FileInfo{}, errdefs.Invalid(wire.CodeUploadIncomplete, "reading the upload into %s failed: %v", path, body.err)
		case errors.As(err, &te) && te.Code == wire.CodeTarConflict:
			return wire.FileInfo{}, errdefs.Conflict(te.Code, "%s", te.Error())
		case errors.As(err, &te):
			return wire.FileInfo{}, errdefs.Invalid(te.Code, "%s; nothing was extracted", te.Error())
		}
		return wire.FileInfo{}, fsError(err, path)
	}
	return fileInfo(path)
}
