package api

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"syscall"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Uploads and downloads of a container sandbox skip the agent's copy: the
// agent opens the file inside the sandbox as for its own /files routes and
// hands the daemon the descriptor (internal/agentapi/filefd.go); the daemon
// copies between the client's connection and the file. Paths, symlinks,
// modes, mounts and the disk limit are the sandbox's own, as before. A
// gvisor sandbox's files live in its user-space kernel, so its agent
// streams them as before; so does an agent that predates FileFD.

// transferBuf is the buffer of an upload's copy: big reads from the
// client's connection, big writes into the file.
var transferBuf = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}

// byDescriptor reports whether sb's files are reached by descriptor.
func byDescriptor(sb *store.Sandbox) bool {
	return sb.Spec.Class == "" || sb.Spec.Class == sandbox.ClassContainer
}

// writeFile is PUT /files.
func (s *Server) writeFile(w http.ResponseWriter, r *http.Request) error {
	client, sb, err := s.agentFor(r) // lookup.go
	if err != nil {
		return err
	}
	if !byDescriptor(sb) {
		return s.proxyTo(client, w, r)
	}
	f, err := client.OpenFD(r.Context(), "write", r.URL.Query())
	if errors.Is(err, agentapi.ErrFDUnsupported) {
		return s.proxyTo(client, w, r)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Commit(r.Context(), fillFile(f, r.Body))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, info)
	return nil
}

// fillFile copies an upload's body into f's file, and names what failed
// as the agent's PutFile would.
func fillFile(f *agentapi.SandboxFile, body io.Reader) error {
	bp := transferBuf.Get().(*[]byte)
	defer transferBuf.Put(bp)
	buf := *bp
	for {
		n, rerr := body.Read(buf)
		if n > 0 {
			if _, err := f.File.Write(buf[:n]); err != nil {
				if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
					return errdefs.DiskFull(wire.CodeNoSpace, "no space left for %s", f.Path)
				}
				return errdefs.Internal(err, "%s: file operation failed", f.Path)
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return errdefs.Invalid(wire.CodeUploadIncomplete, "reading the upload of %s failed: %v", f.Path, rerr)
		}
	}
}

// readFile is GET /files.
func (s *Server) readFile(w http.ResponseWriter, r *http.Request) error {
	client, sb, err := s.agentFor(r) // lookup.go
	if err != nil {
		return err
	}
	if !byDescriptor(sb) {
		return s.proxyTo(client, w, r)
	}
	f, err := client.OpenFD(r.Context(), "read", r.URL.Query())
	if errors.Is(err, agentapi.ErrFDUnsupported) {
		return s.proxyTo(client, w, r)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(f.Size, 10))
	w.WriteHeader(http.StatusOK)
	io.CopyN(w, f.File, f.Size) // sendfile when w is the connection's
	return nil
}
