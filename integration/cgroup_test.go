package integration

import (
	"os"
	"path/filepath"
	"strings"
)

// The daemon puts each instance in cgroup /sbx/<id> (internal/runtime's
// cgroupsPath). On a cgroup v1 host that is one directory per controller,
// /sys/fs/cgroup/<controller>/sbx/<id>; on a v2 (unified) host one
// directory, /sys/fs/cgroup/sbx/<id>, whose files have other names. The
// tests name cgroup files the v1 way and these helpers find them on either.

// cgroupV2 reports whether the host runs the unified hierarchy only.
var cgroupV2 = func() bool {
	_, err := os.Stat("/sys/fs/cgroup/cgroup.controllers")
	return err == nil
}()

// v2Names maps a v1 cgroup file to its v2 counterpart where they differ.
var v2Names = map[string]string{
	"memory.limit_in_bytes": "memory.max",
	"memory.oom_control":    "memory.events", // both have an "oom_kill N" line
	"cpu.cfs_quota_us":      "cpu.max",       // "QUOTA PERIOD"
	"freezer.state":         "cgroup.freeze", // "1" or "0"
}

// cgroupDir is the directory of sandbox id's cgroup of controller ctrl
// ("memory", "pids", "cpu", "freezer").
func cgroupDir(ctrl, id string) string {
	if cgroupV2 {
		return filepath.Join("/sys/fs/cgroup/sbx", id)
	}
	return filepath.Join("/sys/fs/cgroup", ctrl, "sbx", id)
}

// cgroupFile is the path of a cgroup file named the v1 way.
func cgroupFile(ctrl, id, v1name string) string {
	name := v1name
	if v2, ok := v2Names[v1name]; ok && cgroupV2 {
		name = v2
	}
	return filepath.Join(cgroupDir(ctrl, id), name)
}

// readCgroup reads a cgroup file named the v1 way and returns its value as
// v1 would show it: the quota alone for cpu.max, FROZEN or THAWED for
// cgroup.freeze.
func readCgroup(ctrl, id, v1name string) (string, error) {
	b, err := os.ReadFile(cgroupFile(ctrl, id, v1name))
	if err != nil {
		return "", err
	}
	v := strings.TrimSpace(string(b))
	if !cgroupV2 {
		return v, nil
	}
	switch v1name {
	case "cpu.cfs_quota_us":
		if f := strings.Fields(v); len(f) > 0 && f[0] != "max" {
			return f[0], nil
		}
		return "-1", nil
	case "freezer.state":
		if v == "1" {
			return "FROZEN", nil
		}
		return "THAWED", nil
	}
	return v, nil
}

// cgroupDirsOf lists every cgroup directory sandbox id may have.
func cgroupDirsOf(id string) []string {
	if cgroupV2 {
		return []string{cgroupDir("", id)}
	}
	var dirs []string
	for _, ctrl := range []string{"memory", "pids", "cpu", "freezer", "unified"} {
		dirs = append(dirs, cgroupDir(ctrl, id))
	}
	return dirs
}

// leftCgroups lists the cgroup directories of sandbox id that exist.
func leftCgroups(id string) []string {
	var out []string
	for _, dir := range cgroupDirsOf(id) {
		if _, err := os.Stat(dir); err == nil {
			out = append(out, dir)
		}
	}
	return out
}
