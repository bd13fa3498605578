package agentapi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// File transfer by descriptor (FileFD): the agent resolves the path and
// opens the file inside the sandbox, exactly as for GetFile and PutFile
// (its mount namespace, symlinks, modes, the temporary file an upload is
// renamed from), and passes the open descriptor over the agent socket
// (SCM_RIGHTS). The daemon then moves the bytes between the client's
// connection and the file itself: one hop and no agent copy, and the
// daemon never resolves a path of the sandbox on the host. A hostile
// agent can only hand over a descriptor the sandbox already holds; the
// daemon checks it is a regular file and only reads or writes it.

// UpgradeFD is the Upgrade token of FileFD. After the 101 answer the agent
// sends an FDOpened line with the descriptor; for a write the daemon then
// sends an FDCommit line and the agent answers it with an HTTP response
// (wire.FileInfo; 204 once a failed upload's file is removed; or the error).
const UpgradeFD = "sbx-fd"

// FDOpened is the agent's line after FileFD's 101, sent with the descriptor.
type FDOpened struct {
	Path string `json:"path"` // the file's path in the sandbox (a write's, after the symlinks at it)
	Size int64  `json:"size"` // a read's size: the bytes to send
}

// FDCommit is the daemon's line once a write's bytes are in: an empty
// Error renames the written file into place, any other removes it.
type FDCommit struct {
	Error string `json:"error,omitempty"`
}

// ErrFDUnsupported is OpenFD's error from an agent without FileFD (one
// started by an older daemon): the caller goes the streamed way instead.
var ErrFDUnsupported = errors.New("the agent does not hand over file descriptors")

// SandboxFile is a file of the sandbox opened by its agent (OpenFD).
type SandboxFile struct {
	FDOpened
	File *os.File // write the upload into it, or read Size bytes from it
	conn *net.UnixConn
	rr   *rightsReader // descriptors a hostile agent sends later are closed with it
	br   *bufio.Reader
}

// OpenFD asks the agent to open a file: op "read" (query as for GetFile)
// or "write" (as for PutFile; the file is the upload's temporary file, see
// Commit). The caller closes the SandboxFile.
func (c *Client) OpenFD(ctx context.Context, op string, query url.Values) (*SandboxFile, error) {
	q := url.Values{}
	for k, v := range query {
		q[k] = v
	}
	q.Set("op", op)
	conn, err := dialSocket(ctx, c.sock)
	if err != nil {
		return nil, err
	}
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		conn.Close()
		return nil, errdefs.Internal(nil, "the agent socket is not a unix socket")
	}
	f, err := openFD(ctx, uc, q)
	if err != nil {
		uc.Close()
		return nil, err
	}
	return f, nil
}

func openFD(ctx context.Context, uc *net.UnixConn, q url.Values) (*SandboxFile, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(CallTimeout)
	}
	uc.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { uc.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	req, err := http.NewRequest(FileFD.Method, agentURL(FileFD.Path, q.Encode()), nil)
	if err != nil {
		return nil, errdefs.Internal(err, "build agent request")
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", UpgradeFD)
	if err := req.Write(uc); err != nil {
		return nil, transportError(err)
	}
	rr := &rightsReader{c: uc}
	defer rr.closeAll() // whatever was sent but not taken (Close closes later ones)
	br := bufio.NewReader(io.LimitReader(rr, MaxHeaderBytes+MaxAnswer))
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return nil, transportError(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, MaxAnswer))
		err := responseError(resp.StatusCode, body)
		if errdefs.CodeOf(err) == wire.CodeAgentError && (resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed) {
			return nil, ErrFDUnsupported
		}
		return nil, err
	}
	line, err := br.ReadSlice('\n')
	if err != nil {
		return nil, transportError(err)
	}
	var out SandboxFile
	if err := json.Unmarshal(line, &out.FDOpened); err != nil {
		return nil, errdefs.Unavailable(wire.CodeAgentError, "the agent's FileFD answer is not JSON: %.200s", line)
	}
	if len(rr.fds) != 1 {
		return nil, errdefs.Unavailable(wire.CodeAgentError, "the agent sent %d file descriptors, want 1", len(rr.fds))
	}
	var st unix.Stat_t
	if err := unix.Fstat(rr.fds[0], &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, errdefs.Unavailable(wire.CodeAgentError, "the agent's descriptor for %s is not a regular file", out.Path)
	}
	out.File = os.NewFile(uintptr(rr.fds[0]), out.Path)
	rr.fds = nil
	uc.SetDeadline(time.Time{}) // a transfer takes as long as the client's bytes
	out.conn, out.rr, out.br = uc, rr, br
	return &out, nil
}

// Commit ends a write whose bytes are all in File (failed nil), renaming
// the file into place, and returns its info; with failed set the agent
// removes the file and Commit returns failed once it has.
func (f *SandboxFile) Commit(ctx context.Context, failed error) (wire.FileInfo, error) {
	var info wire.FileInfo
	if err := f.File.Close(); err != nil && failed == nil {
		failed = err
	}
	var line []byte
	if failed != nil {
		line, _ = json.Marshal(FDCommit{Error: failed.Error()})
	} else {
		line, _ = json.Marshal(FDCommit{})
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(CallTimeout)
	}
	f.conn.SetDeadline(deadline)
	if _, err := f.conn.Write(append(line, '\n')); err != nil {
		if failed != nil {
			return info, failed
		}
		return info, transportError(err)
	}
	// The answer comes once the file is renamed into place, or removed.
	resp, err := http.ReadResponse(f.br, nil)
	if failed != nil {
		if err == nil {
			resp.Body.Close()
		}
		return info, failed
	}
	if err != nil {
		return info, transportError(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswer+1))
	if err != nil || len(body) > MaxAnswer {
		return info, errdefs.Unavailable(wire.CodeAgentError, "the agent's answer to a FileFD write is unreadable or too large")
	}
	if resp.StatusCode/100 != 2 {
		return info, responseError(resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, &info); err != nil {
		return info, errdefs.Internal(err, "decode the agent's answer to %s", FileFD.Pattern())
	}
	return info, nil
}

// Close releases the descriptor and the connection; a write not committed
// is abandoned (the agent removes its temporary file).
func (f *SandboxFile) Close() error {
	f.File.Close()
	f.rr.closeAll()
	return f.conn.Close()
}

// rightsReader reads from a unix socket and keeps the descriptors that
// come with the bytes.
type rightsReader struct {
	c   *net.UnixConn
	fds []int
}

func (r *rightsReader) Read(p []byte) (int, error) {
	oob := make([]byte, unix.CmsgSpace(4*4)) // room for a few: extras are closed, not left open
	n, oobn, _, _, err := r.c.ReadMsgUnix(p, oob)
	if oobn > 0 {
		msgs, perr := unix.ParseSocketControlMessage(oob[:oobn])
		if perr != nil {
			return n, fmt.Errorf("agent control message: %w", perr)
		}
		for _, m := range msgs {
			if fds, err := unix.ParseUnixRights(&m); err == nil {
				r.fds = append(r.fds, fds...)
			}
		}
	}
	return n, err
}

func (r *rightsReader) closeAll() {
	for _, fd := range r.fds {
		unix.Close(fd)
	}
	r.fds = nil
}
