package agent

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// One desktop program: restart it, read its output. Each program writes
// stdout to <name>.log and stderr to <name>.err.log in desktopLogDir,
// afresh at each start (startProgram in desktop.go).

// maxProgramLog is how much of the end of a program's log is answered.
const maxProgramLog = 1 << 20

// program finds the running desktop's program named by the request.
func (s *server) program(r *http.Request) (*desktopRun, *desktopProgram, error) {
	run, err := s.desktop.running()
	if err != nil {
		return nil, nil, err
	}
	name := r.PathValue("program")
	var names []string
	for _, p := range run.programs {
		if p.name == name {
			return run, p, nil
		}
		names = append(names, p.name)
	}
	return nil, nil, errdefs.NotFound(wire.CodeInvalidParameter, "the desktop has no program %q (it has: %s)", name, strings.Join(names, ", "))
}

// handleDesktopProgramRestart ends the program's process group; its
// supervisor starts it again. The answer comes once it runs again (or
// after desktopReadyWait, with running false).
func (s *server) handleDesktopProgramRestart(w http.ResponseWriter, r *http.Request) {
	run, p, err := s.program(r)
	if err != nil {
		writeError(w, err)
		return
	}
	p.mu.Lock()
	pid, restarts := p.pid, p.restarts
	if pid != 0 {
		syscall.Kill(-pid, syscall.SIGTERM)
	}
	p.mu.Unlock()
	deadline := time.Now().Add(desktopReadyWait)
	for {
		p.mu.Lock()
		st := wire.DesktopProgram{Name: p.name, Pid: p.pid, Running: p.pid != 0, Restarts: p.restarts}
		p.mu.Unlock()
		select {
		case <-run.stopping:
			writeError(w, errdefs.Conflict(wire.CodeDesktopNotRunning, "the desktop stopped"))
			return
		default:
		}
		if (st.Running && st.Restarts > restarts) || time.Now().After(deadline) {
			writeJSON(w, http.StatusOK, st)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// handleDesktopProgramLogs answers the program's stdout and stderr since
// it last started (their last MiB each).
func (s *server) handleDesktopProgramLogs(w http.ResponseWriter, r *http.Request) {
	_, p, err := s.program(r)
	if err != nil {
		writeError(w, err)
		return
	}
	var out wire.DesktopProgramLogs
	for _, f := range []struct {
		file string
		to   *string
	}{{p.name + ".log", &out.Stdout}, {p.name + ".err.log", &out.Stderr}} {
		b, err := readTail(filepath.Join(desktopLogDir, f.file), maxProgramLog)
		if err != nil && !os.IsNotExist(err) {
			writeError(w, errdefs.Internal(err, "read %s", f.file))
			return
		}
		*f.to = string(b)
	}
	writeJSON(w, http.StatusOK, out)
}

// readTail reads the last n bytes of the file at path.
func readTail(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > n {
		f.Seek(fi.Size()-n, io.SeekStart)
	}
	return io.ReadAll(io.LimitReader(f, n))
}
