package runtime

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// OOMKilled reports whether the kernel's OOM killer has killed a process of
// instance id, as its memory cgroup counts ("oom_kill" in memory.events on
// cgroup v2, in memory.oom_control on v1). Ask before Delete, which removes
// the cgroup; a missing cgroup reads as false.
func OOMKilled(id string) bool {
	mounts, err := cgroupMounts()
	if err != nil {
		return false
	}
	for _, m := range mounts {
		dir := filepath.Join(m, cgroupsPath(id))
		for _, file := range []string{"memory.events", "memory.oom_control"} {
			if oomKills(filepath.Join(dir, file)) > 0 {
				return true
			}
		}
	}
	return false
}

// oomKills reads the "oom_kill N" line of a cgroup memory file.
func oomKills(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}
