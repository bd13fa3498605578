package census

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// DaemonPID finds the running `sbx serve` of dataDir: the process with
// "serve" in its arguments that holds a file of dataDir open (its store).
// 0: none runs.
func DaemonPID(dataDir string) int {
	pids, _ := filepath.Glob(filepath.Join(procDir, "[0-9]*"))
	for _, p := range pids {
		cmd, err := os.ReadFile(filepath.Join(p, "cmdline"))
		if err != nil || !bytes.Contains(append([]byte{0}, cmd...), []byte("\x00serve\x00")) {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join(p, "fd"))
		for _, fd := range fds {
			if t, err := os.Readlink(filepath.Join(p, "fd", fd.Name())); err == nil && under(t, dataDir) {
				pid, _ := strconv.Atoi(filepath.Base(p))
				return pid
			}
		}
	}
	return 0
}

// Unknown is a Scope.Sandbox for the sandboxes dataDir does not hold (no
// <dataDir>/sandboxes/<id>): what is left of them is a leftover, unless
// another daemon on the host made it.
func Unknown(dataDir string) func(id string) bool {
	return func(id string) bool {
		_, err := os.Stat(filepath.Join(dataDir, "sandboxes", id))
		return os.IsNotExist(err)
	}
}

// Leftovers is the part of a census of Unknown sandboxes that names
// objects: their processes, cgroups, /run/sbx mounts and id ranges.
func Leftovers(dataDir string) *Census {
	all := Take(Scope{Sandbox: Unknown(dataDir)})
	return &Census{Processes: all.Processes, Cgroups: all.Cgroups, Mounts: all.Mounts, FUSE: all.FUSE, IDRanges: all.IDRanges}
}
