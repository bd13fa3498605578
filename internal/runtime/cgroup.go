package runtime

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroupV2 reports whether the host runs the unified hierarchy only.
func cgroupV2() bool {
	_, err := os.Stat("/sys/fs/cgroup/cgroup.controllers")
	return err == nil
}

// swapAccounting reports whether the kernel can limit memory+swap, so the
// spec asks for it only where runc can write it.
func swapAccounting() bool {
	if cgroupV2() {
		// The root cgroup has no memory.swap.max; look at our own.
		data, err := os.ReadFile("/proc/self/cgroup")
		if err != nil {
			return false
		}
		for _, line := range strings.Split(string(data), "\n") {
			if p, ok := strings.CutPrefix(line, "0::"); ok {
				_, err := os.Stat(filepath.Join("/sys/fs/cgroup", p, "memory.swap.max"))
				return err == nil
			}
		}
		return false
	}
	_, err := os.Stat("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes")
	return err == nil
}

// cgroupMounts returns the mount points of every cgroup hierarchy (each v1
// controller, and the v2 unified tree on v2 or hybrid hosts).
func cgroupMounts() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint opts [optional...] - fstype source superopts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		fields, fstype := strings.Fields(pre), strings.Fields(post)
		if len(fields) < 5 || len(fstype) == 0 {
			continue
		}
		if fstype[0] == "cgroup" || fstype[0] == "cgroup2" {
			out = append(out, UnescapeMount(fields[4]))
		}
	}
	return out, sc.Err()
}

// UnescapeMount undoes the octal escapes (\040 for space) of mountinfo.
func UnescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// CgroupDirs returns the cgroup directories instance id has now, in every
// hierarchy: none once it is deleted (runtimetest checks that).
func CgroupDirs(id string) ([]string, error) {
	mounts, err := cgroupMounts()
	if err != nil {
		return nil, fmt.Errorf("list cgroup mounts: %w", err)
	}
	var out []string
	for _, m := range mounts {
		dir := filepath.Join(m, cgroupsPath(id))
		if _, err := os.Stat(dir); err == nil {
			out = append(out, dir)
		}
	}
	return out, nil
}

// removeCgroups removes the container's cgroup directory in every hierarchy,
// killing any process still in it. runc normally removes them; this makes
// sure, because a leaked cgroup pins kernel memory and breaks the next start
// of the same id. It fails only if a directory is still there at the end.
func removeCgroups(id string) error {
	mounts, err := cgroupMounts()
	if err != nil {
		return fmt.Errorf("list cgroup mounts: %w", err)
	}
	var errs []error
	for _, m := range mounts {
		dir := filepath.Join(m, cgroupsPath(id))
		if err := removeCgroupDir(dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeCgroupDir removes dir and any child cgroups, deepest first. Only
// empty cgroups can be removed, so between attempts it thaws the cgroup and
// SIGKILLs what is left, until a deadline.
func removeCgroupDir(dir string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := rmdirTree(dir)
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("remove cgroup %s: %w", dir, err)
		}
		killCgroup(dir)
		time.Sleep(20 * time.Millisecond)
	}
}

func rmdirTree(dir string) error {
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := syscall.Rmdir(dirs[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// killCgroup SIGKILLs every process in the cgroup tree at dir. These are the
// container's own processes: nothing else is put in sbx's cgroups.
func killCgroup(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		// A frozen process cannot die; thaw first (v1 freezer, v2 cgroup.freeze).
		writeExisting(filepath.Join(p, "freezer.state"), "THAWED")
		writeExisting(filepath.Join(p, "cgroup.freeze"), "0")
		data, _ := os.ReadFile(filepath.Join(p, "cgroup.procs"))
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		return nil
	})
}

// writeExisting writes to a control file if it exists; it never creates one.
func writeExisting(path, value string) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return
	}
	_, _ = f.WriteString(value)
	_ = f.Close()
}
