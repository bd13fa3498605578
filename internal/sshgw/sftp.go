package sshgw

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"strconv"
	"time"

	"github.com/pkg/sftp"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// serveSFTP serves the sftp subsystem (sftp, scp, editors) with pkg/sftp's
// request server over the agent's file operations: paths are the
// sandbox's, and the host's filesystem is never touched.
func (s *session) serveSFTP(ctx context.Context, ready chan<- runner) {
	a, err := s.c.agent()
	if err != nil {
		s.fail(err)
		ready <- noRunner{}
		return
	}
	ready <- noRunner{}
	start := "/"
	if sb, err := s.c.gw.cfg.Sandboxes.Get(ctx, s.c.grant.SandboxID); err == nil && sb.Spec.Workdir != "" {
		start = sb.Spec.Workdir
	}
	fsys := &agentFS{ctx: ctx, a: a}
	h := sftp.Handlers{FileGet: fsys, FilePut: fsys, FileCmd: fsys, FileList: fsys}
	// The server closes what it serves on; the channel must stay open for
	// the exit status, without which scp fails (ssh exits 255).
	srv := sftp.NewRequestServer(keepOpen{s.ch}, h, sftp.WithStartDirectory(start))
	err = srv.Serve()
	srv.Close()
	if err == nil || errors.Is(err, io.EOF) {
		s.exit(0, "")
	} else {
		s.exit(1, "")
	}
}

// keepOpen is a channel whose Close leaves it open (serveSession closes
// it after the exit status).
type keepOpen struct{ io.ReadWriter }

func (keepOpen) Close() error { return nil }

// agentFS is the sandbox's filesystem as pkg/sftp's handlers want it.
type agentFS struct {
	ctx context.Context
	a   *agentapi.Client
}

// fsError maps an agent error to what an sftp client understands.
func fsError(err error) error {
	if err == nil {
		return nil
	}
	// pkg/sftp recognises a missing file by os.IsNotExist, which looks
	// through a PathError but not through wrapping.
	switch errdefs.KindOf(err) {
	case errdefs.KindNotFound:
		return &fs.PathError{Op: "sbx", Path: err.Error(), Err: fs.ErrNotExist}
	case errdefs.KindConflict:
		return &fs.PathError{Op: "sbx", Path: err.Error(), Err: fs.ErrExist}
	}
	return err
}

func pathQuery(p string) url.Values { return url.Values{"path": {p}} }

func (f *agentFS) stat(p string) (*wire.FileInfo, error) {
	fi, err := agentapi.Call[wire.FileInfo](f.ctx, f.a, agentapi.StatFile, agentapi.Params{Query: pathQuery(p)}, nil)
	return &fi, fsError(err)
}

// Fileread streams the file from the agent (see fileReader).
func (f *agentFS) Fileread(r *sftp.Request) (io.ReaderAt, error) {
	rd := &fileReader{fs: f, path: r.Filepath}
	if err := rd.open(0); err != nil {
		return nil, err
	}
	return rd, nil
}

// Filewrite streams what the client writes to the agent (see fileWriter).
func (f *agentFS) Filewrite(r *sftp.Request) (io.WriterAt, error) {
	return newFileWriter(f, r.Filepath)
}

func (f *agentFS) Filecmd(r *sftp.Request) error {
	switch r.Method {
	case "Setstat":
		return nil // modes and times are kept as the agent writes them (a shortcut; see docs/ssh.md)
	case "Rename":
		_, err := agentapi.Call[agentapi.None](f.ctx, f.a, agentapi.Move, agentapi.Params{}, wire.MoveRequest{From: r.Filepath, To: r.Target})
		return fsError(err)
	case "Rmdir", "Remove":
		_, err := agentapi.Call[agentapi.None](f.ctx, f.a, agentapi.DeleteFile, agentapi.Params{Query: pathQuery(r.Filepath)}, nil)
		return fsError(err)
	case "Mkdir":
		_, err := agentapi.Call[agentapi.None](f.ctx, f.a, agentapi.Mkdir, agentapi.Params{}, wire.MkdirRequest{Path: r.Filepath})
		return fsError(err)
	}
	return sftp.ErrSSHFxOpUnsupported
}

// PosixRename replaces the target, as posix-rename@openssh.com promises.
func (f *agentFS) PosixRename(r *sftp.Request) error {
	_, err := agentapi.Call[agentapi.None](f.ctx, f.a, agentapi.Move, agentapi.Params{}, wire.MoveRequest{From: r.Filepath, To: r.Target, Overwrite: true})
	return fsError(err)
}

func (f *agentFS) Filelist(r *sftp.Request) (sftp.ListerAt, error) {
	switch r.Method {
	case "List":
		list, err := agentapi.Call[[]wire.FileInfo](f.ctx, f.a, agentapi.ListFiles, agentapi.Params{Query: pathQuery(r.Filepath)}, nil)
		if err != nil {
			return nil, fsError(err)
		}
		out := make(listing, len(list))
		for i := range list {
			out[i] = fileInfo{list[i]}
		}
		return out, nil
	case "Stat":
		fi, err := f.stat(r.Filepath)
		if err != nil {
			return nil, err
		}
		return listing{fileInfo{*fi}}, nil
	case "Readlink":
		fi, err := f.stat(r.Filepath)
		if err != nil {
			return nil, err
		}
		if fi.Type != "symlink" {
			return nil, sftp.ErrSSHFxFailure
		}
		return listing{fileInfo{wire.FileInfo{Name: fi.Target}}}, nil
	}
	return nil, sftp.ErrSSHFxOpUnsupported
}

type listing []os.FileInfo

func (l listing) ListAt(out []os.FileInfo, off int64) (int, error) {
	if off >= int64(len(l)) {
		return 0, io.EOF
	}
	n := copy(out, l[off:])
	if off+int64(n) == int64(len(l)) {
		return n, io.EOF
	}
	return n, nil
}

// fileInfo is an wire.FileInfo as an os.FileInfo.
type fileInfo struct{ fi wire.FileInfo }

func (i fileInfo) Name() string {
	if i.fi.Name == "" {
		return path.Base(i.fi.Path)
	}
	return i.fi.Name
}
func (i fileInfo) Size() int64        { return i.fi.Size }
func (i fileInfo) ModTime() time.Time { return i.fi.ModTime }
func (i fileInfo) IsDir() bool        { return i.fi.Type == "dir" }
func (i fileInfo) Sys() any           { return nil }
func (i fileInfo) Mode() fs.FileMode {
	perm, _ := strconv.ParseUint(i.fi.Mode, 8, 32)
	m := fs.FileMode(perm) & fs.ModePerm
	switch i.fi.Type {
	case "dir":
		m |= fs.ModeDir
	case "symlink":
		m |= fs.ModeSymlink
	case "other":
		m |= fs.ModeIrregular
	}
	return m
}
