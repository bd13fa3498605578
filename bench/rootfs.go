package main

import (
	"archive/tar"
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// baseRootfs returns the unpacked layer of the daemon's base image: at start
// it is the only directory under layers/.
func baseRootfs(dataDir string) (string, error) {
	entries, err := os.ReadDir(filepath.Join(dataDir, "layers"))
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if e.IsDir() {
			return filepath.Join(dataDir, "layers", e.Name()), nil
		}
	}
	return "", fmt.Errorf("no base layer under %s/layers", dataDir)
}

// writeRootfsTar writes dir as a tar at path, for `docker import` and
// `podman import`, so every peer runs the very tree sbx runs.
func writeRootfsTar(dir, path string) (string, error) {
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	bw := bufio.NewWriter(f)
	tw := tar.NewWriter(bw)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if fi.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		}
		h, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		h.Name = rel
		if fi.IsDir() {
			h.Name += "/"
		}
		h.Uname, h.Gname = "", ""
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			src, err := os.Open(p)
			if err != nil {
				return err
			}
			defer src.Close()
			_, err = io.Copy(tw, src)
			return err
		}
		return nil
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = bw.Flush()
	}
	return path, err
}

// runcPid returns the host pid of a runc container's init.
func runcPid(root, id string) (int, error) {
	out, err := exec.Command("runc", "--root", root, "state", id).Output()
	if err != nil {
		return 0, fmt.Errorf("runc state %s: %w", id, err)
	}
	var st struct{ Pid int }
	if err := json.Unmarshal(out, &st); err != nil {
		return 0, err
	}
	return st.Pid, nil
}

// cgroupMemory returns the memory charged to pid's memory cgroup:
// memory.usage_in_bytes (cgroup v1) or memory.current (v2).
func cgroupMemory(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var file string
		switch {
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			file = filepath.Join("/sys/fs/cgroup/memory", parts[2], "memory.usage_in_bytes")
		case parts[0] == "0" && parts[1] == "":
			file = filepath.Join("/sys/fs/cgroup", parts[2], "memory.current")
		default:
			continue
		}
		v, err := os.ReadFile(file)
		if err != nil {
			continue // v2 line on a hybrid host without the memory controller
		}
		return strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64)
	}
	return 0, fmt.Errorf("no memory cgroup for pid %d", pid)
}

// rss returns a process's resident set size in bytes (VmRSS).
func rss(pid int) (int64, error) { return procStatus(pid, "VmRSS:") }

// rssAnon returns the anonymous part of a process's resident set in bytes
// (RssAnon): its heap and stacks, without the pages of its mapped binary.
func rssAnon(pid int) (int64, error) { return procStatus(pid, "RssAnon:") }

// procStatus returns a kB field of /proc/pid/status in bytes.
func procStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, nil // a kernel thread or a zombie
}

// ppid returns the parent pid of pid.
func ppid(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// pid (comm) state ppid …; comm may hold spaces and parentheses.
	rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
	f := strings.Fields(rest)
	if len(f) < 2 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	return strconv.Atoi(f[1])
}

// childrenNamed returns the pids of parent's children whose comm is name.
func childrenNamed(parent int, name string) []int {
	var out []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		if p, err := ppid(pid); err != nil || p != parent {
			continue
		}
		if comm, _ := os.ReadFile(d + "/comm"); strings.TrimSpace(string(comm)) == name {
			out = append(out, pid)
		}
	}
	return out
}

// overlay mounts lower read-only under a fresh upper at dir/rootfs, as a
// hand-rolled sandbox would, and returns the mount point.
func overlay(lower, dir string) (string, error) {
	upper, work, target := filepath.Join(dir, "upper"), filepath.Join(dir, "work"), filepath.Join(dir, "rootfs")
	for _, d := range []string{upper, work, target} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", err
		}
	}
	opts := "lowerdir=" + lower + ",upperdir=" + upper + ",workdir=" + work
	if err := syscall.Mount("overlay", target, "overlay", 0, opts); err != nil {
		return "", fmt.Errorf("mount overlay at %s: %w", target, err)
	}
	return target, nil
}
