package runtime

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CgroupStats is what an instance's cgroups say it uses now. A value the
// host does not account (or a cgroup that is gone) reads as zero; a limit
// of zero means none.
type CgroupStats struct {
	CPUNanos    uint64 // CPU time used since the instance started
	MemoryBytes uint64 // memory in use, without reclaimable inactive file cache
	MemoryLimit uint64
	Pids        uint64
	PidsLimit   uint64
}

// ReadCgroupStats reads the cgroups of instance id, on cgroup v1 (one
// hierarchy per controller) or v2 (the unified tree). It never fails: a
// stopped instance has no cgroup and reads as all zeros.
func ReadCgroupStats(id string) CgroupStats {
	st := CgroupStats{CPUNanos: CgroupCPUNanos(id), MemoryBytes: CgroupMemoryBytes(id)}
	if cgroupV2() {
		dir := filepath.Join("/sys/fs/cgroup", cgroupsPath(id))
		st.MemoryLimit = readUint(filepath.Join(dir, "memory.max"))
		st.Pids = readUint(filepath.Join(dir, "pids.current"))
		st.PidsLimit = readUint(filepath.Join(dir, "pids.max"))
		return st
	}
	st.MemoryLimit = readUint(cgroupV1File(id, "memory", "memory.limit_in_bytes"))
	if st.MemoryLimit >= 1<<62 { // v1 writes "no limit" as a huge page-rounded number
		st.MemoryLimit = 0
	}
	st.Pids = readUint(cgroupV1File(id, "pids", "pids.current"))
	st.PidsLimit = readUint(cgroupV1File(id, "pids", "pids.max"))
	return st
}

// CgroupCPUNanos is the CPU time instance id has used: one file read, the
// cheapest sign of whether it did anything since the last look.
func CgroupCPUNanos(id string) uint64 {
	if cgroupV2() {
		return statField(filepath.Join("/sys/fs/cgroup", cgroupsPath(id), "cpu.stat"), "usage_usec") * 1000
	}
	return readUint(cgroupV1File(id, "cpuacct", "cpuacct.usage"))
}

// CgroupMemoryBytes is the memory instance id uses now, without
// reclaimable inactive file cache. It reads memory.stat, which costs the
// kernel far more than a one-number file.
func CgroupMemoryBytes(id string) uint64 {
	if cgroupV2() {
		dir := filepath.Join("/sys/fs/cgroup", cgroupsPath(id))
		return subFloor(readUint(filepath.Join(dir, "memory.current")), statField(filepath.Join(dir, "memory.stat"), "inactive_file"))
	}
	return subFloor(readUint(cgroupV1File(id, "memory", "memory.usage_in_bytes")), statField(cgroupV1File(id, "memory", "memory.stat"), "total_inactive_file"))
}

// cgroupV1File is file of instance id's cgroup in controller's hierarchy.
func cgroupV1File(id, controller, file string) string {
	return filepath.Join("/sys/fs/cgroup", controller, cgroupsPath(id), file)
}

// readUint reads a control file holding one number; "max", a missing file
// or garbage read as 0.
func readUint(path string) uint64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	return n
}

// statField reads the value of "key N" in a flat-keyed file (memory.stat, cpu.stat).
func statField(path, key string) uint64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

func subFloor(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}
