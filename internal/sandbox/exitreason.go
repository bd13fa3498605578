package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// exitReason says why a started sandbox's instance went away on its own:
// "main-exit" when the agent left the exit marker of the main process,
// "oom" when the instance's memory cgroup counts an OOM kill, else "crash"
// with crashMsg. Call it before the instance's cgroup is removed.
//
// The marker lives in the run directory, which code inside the sandbox can
// write: it can make its own sandbox's stop read "main-exit", nothing else.
// So the file is opened without following links or blocking on a fifo.
func (m *Manager) exitReason(sb *store.Sandbox, crashMsg string) (reason, msg string) {
	oom := runtime.OOMKilled(sb.ID)
	limit := fmt.Sprintf("the instance hit its memory limit (%d MiB) and the kernel killed a process", sb.Spec.MemoryMiB)
	ex, ok := readExitMarker(m.dirsOf(sb.ID).run)
	switch {
	case ok && oom && ex.Signal == "SIGKILL":
		return "oom", "the main process was killed: " + limit
	case ok:
		return "main-exit", "the main process " + ex.Describe()
	case oom:
		return "oom", limit
	}
	return "crash", crashMsg
}

func readExitMarker(runDir string) (agentapi.MainExit, bool) {
	var ex agentapi.MainExit
	f, err := os.OpenFile(filepath.Join(runDir, agentapi.MainExitFile), os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return ex, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return ex, false
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil || json.Unmarshal(b, &ex) != nil {
		return ex, false
	}
	return ex, true
}

// MainExit is how the main process of sb's last instance ended, if it did
// (the agent's exit marker; cleared when an instance starts).
func (m *Manager) MainExit(sb *store.Sandbox) (agentapi.MainExit, bool) {
	return readExitMarker(m.dirsOf(sb.ID).run)
}

// clearExitMarker removes a marker left by the previous instance.
func (m *Manager) clearExitMarker(id string) {
	err := os.Remove(filepath.Join(m.dirsOf(id).run, agentapi.MainExitFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		m.log.Warn("remove exit marker", "id", id, "err", err)
	}
}

// MainLogPath is where the agent writes the log of the sandbox's main
// process; the agent rotates it to the same name with ".1" appended. Open
// either with OpenLogFile. A sandbox without an entrypoint has none.
func (m *Manager) MainLogPath(sb *store.Sandbox) (string, error) {
	if len(sb.Spec.Entrypoint) == 0 {
		return "", errdefs.NotFound(wire.CodeNoMainProcess, "sandbox %s has no entrypoint, so no main process log; create it with an entrypoint", refOf(sb))
	}
	return filepath.Join(m.dirsOf(sb.ID).run, agentapi.MainLogFile), nil
}

// OpenLogFile opens a log that code in a sandbox writes. The run directory
// is writable from inside, so the file is opened without following links
// or blocking on a fifo, and must be a regular file.
func OpenLogFile(path string) (*os.File, error) { return openLog(path) }

func openLog(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, errors.New("not a regular file")
	}
	return f, nil
}
