package agent

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// procInfo is what /proc/<pid>/stat says about a process's place in the
// process tree.
type procInfo struct {
	pid, ppid, pgrp, sid int
	zombie               bool // exited, not yet reaped: signals do nothing
}

// listProcs reads every process of the pid namespace from /proc. Processes
// that vanish while it reads are skipped.
func listProcs() []procInfo {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []procInfo
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// "pid (comm) state ppid pgrp session …"; comm may hold spaces
		// and parentheses, so parse from the last ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 4 {
			continue
		}
		ppid, _ := strconv.Atoi(string(f[1]))
		pgrp, _ := strconv.Atoi(string(f[2]))
		sid, _ := strconv.Atoi(string(f[3]))
		out = append(out, procInfo{pid: pid, ppid: ppid, pgrp: pgrp, sid: sid, zombie: string(f[0]) == "Z"})
	}
	return out
}

// descendants returns the pids of every process below root.
func descendants(root int) []int {
	children := map[int][]int{}
	for _, p := range listProcs() {
		if !p.zombie {
			children[p.ppid] = append(children[p.ppid], p.pid)
		}
	}
	var out []int
	queue := children[root]
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		out = append(out, pid)
		queue = append(queue, children[pid]...)
	}
	return out
}

// killDescendants SIGKILLs every process below root but not root itself,
// again and again while a fork races with it (bounded).
func killDescendants(root int) {
	for range 20 {
		pids := descendants(root)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// killSession SIGKILLs every process of session sid, including job-control
// process groups that a kill of the leader's group would miss.
func killSession(sid int) {
	for range 20 {
		found := false
		for _, p := range listProcs() {
			if p.sid == sid && !p.zombie {
				syscall.Kill(p.pid, syscall.SIGKILL)
				found = true
			}
		}
		if !found {
			return
		}
	}
}
