package agent

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// handleFileFD opens a file as GetFile (op=read) or PutFile (op=write)
// would, and hands its descriptor to the daemon, which moves the bytes
// (internal/agentapi/filefd.go). A write stays the upload's temporary file
// until the daemon commits it; a connection that ends first removes it.
func (s *server) handleFileFD(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Upgrade") != agentapi.UpgradeFD {
		writeError(w, errdefs.Invalid(wire.CodeInvalidParameter, "%s needs Upgrade: %s", agentapi.FileFD.Pattern(), agentapi.UpgradeFD))
		return
	}
	var (
		f      *os.File
		up     *upload
		opened agentapi.FDOpened
		err    error
	)
	switch op := r.URL.Query().Get("op"); op {
	case "read":
		f, opened.Size, err = s.openDownload(r)
		if err == nil {
			defer f.Close()
			opened.Path = f.Name()
		}
	case "write":
		up, err = s.startUpload(r)
		if err == nil {
			defer up.abort()
			f, opened.Path = up.tmp, up.path
		}
	default:
		err = errdefs.Invalid(wire.CodeInvalidParameter, "op must be read or write, got %q", op)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		writeError(w, errdefs.Internal(err, "take over the connection"))
		return
	}
	defer conn.Close()
	inner := conn
	if tc, ok := conn.(*trackedConn); ok { // suspend.go
		inner = tc.Conn
	}
	uc, ok := inner.(*net.UnixConn)
	if !ok {
		logf("%s: the connection is not a unix socket", agentapi.FileFD.Pattern())
		return
	}
	conn.SetDeadline(time.Time{})
	line, _ := json.Marshal(opened)
	msg := "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + agentapi.UpgradeFD + "\r\n\r\n" + string(line) + "\n"
	raw, err := f.SyscallConn()
	if err != nil {
		return
	}
	var sendErr error
	raw.Control(func(fd uintptr) {
		_, _, sendErr = uc.WriteMsgUnix([]byte(msg), unix.UnixRights(int(fd)), nil)
	})
	if sendErr != nil || up == nil {
		return
	}
	commit, err := readCommit(buf.Reader)
	if err != nil {
		return // the daemon went: abort removes the file
	}
	rec := httptest.NewRecorder()
	if commit.Error != "" {
		// The daemon failed the upload: the file goes before the answer,
		// so the caller's error comes after nothing is left.
		up.abort()
		rec.WriteHeader(http.StatusNoContent)
	} else if info, err := up.finish(); err != nil {
		writeError(rec, err)
	} else {
		writeJSON(rec, http.StatusOK, info)
	}
	fmt.Fprintf(conn, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		rec.Code, http.StatusText(rec.Code), rec.Body.Len())
	conn.Write(rec.Body.Bytes())
}

// readCommit reads the daemon's FDCommit line.
func readCommit(br *bufio.Reader) (agentapi.FDCommit, error) {
	var c agentapi.FDCommit
	line, err := br.ReadSlice('\n') // bufio's buffer bounds it
	if err != nil {
		return c, err
	}
	return c, json.Unmarshal(line, &c)
}
