package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/sdk"
)

// TestServiceStopLeavesSandboxesRunning plays what systemd does with
// packaging/sbx.service: the daemon runs in a cgroup of its own (the
// unit's, in the hierarchy systemd tracks units by), and stopping the
// service signals only the daemon (KillMode=process). It checks that the
// instances of both classes live outside the daemon's cgroup, so not even
// KillMode=control-group would reach them, and that after the stop and a
// new daemon in the same cgroup they still run, with their processes.
func TestServiceStopLeavesSandboxesRunning(t *testing.T) {
	unitCgroup := unitCgroup(t)
	d := gvisorDaemon(t)
	ctx := context.Background()
	joinCgroup(t, unitCgroup, d.cmd.Process.Pid) // before any instance exists
	for _, class := range []string{"container", "gvisor"} {
		d.create(sdk.CreateSandboxRequest{Name: class, Class: class})
		if _, err := d.client.Exec(ctx, class, sdk.ExecRequest{Shell: "sleep 1000 >/dev/null 2>&1 &"}); err != nil {
			t.Fatal(err)
		}
	}
	if procs := cgroupProcs(t, unitCgroup); !slices.Equal(procs, []int{d.cmd.Process.Pid}) {
		t.Errorf("the unit's cgroup holds %s; want only the daemon (pid %d)", describePids(procs), d.cmd.Process.Pid)
	}

	d.stop() // SIGTERM to the main process: systemctl stop with KillMode=process
	d.start()
	joinCgroup(t, unitCgroup, d.cmd.Process.Pid)
	for _, class := range []string{"container", "gvisor"} {
		sb, err := d.client.GetSandbox(ctx, class)
		if err != nil || sb.State != sdk.StateStarted {
			t.Fatalf("%s after the restart = %+v, %v", class, sb, err)
		}
		res, err := d.client.Exec(ctx, class, sdk.ExecRequest{Shell: "ps -o args | grep -c '^sleep 1000'"})
		if err != nil || res.Stdout != "1\n" {
			t.Errorf("%s: the process started before the restart: %+v, %v", class, res, err)
		}
	}
}

// unitCgroup makes a cgroup standing for the unit's in the hierarchy
// systemd tracks services by: name=systemd on cgroup v1, the unified one
// on v2. Cleanup moves what is left in it out and removes it.
func unitCgroup(t *testing.T) string {
	t.Helper()
	parent := "/sys/fs/cgroup/systemd"
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		parent = "/sys/fs/cgroup"
	} else if _, err := os.Stat(filepath.Join(parent, "cgroup.procs")); err != nil {
		t.Skip("no name=systemd cgroup hierarchy to play the unit's cgroup in")
	}
	dir := filepath.Join(parent, fmt.Sprintf("sbx-service-test-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, pid := range cgroupProcs(t, dir) {
			os.WriteFile(filepath.Join(parent, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644)
		}
		if err := os.Remove(dir); err != nil {
			t.Errorf("remove the test cgroup: %v", err)
		}
	})
	return dir
}

func joinCgroup(t *testing.T, dir string, pid int) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		t.Fatalf("move pid %d into %s: %v", pid, dir, err)
	}
}

func cgroupProcs(t *testing.T, dir string) []int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids
}

// describePids names each process by its command line, for the failure.
func describePids(pids []int) string {
	var out []string
	for _, pid := range pids {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		out = append(out, fmt.Sprintf("%d (%s)", pid, strings.ReplaceAll(strings.TrimSpace(string(cmdline)), "\x00", " ")))
	}
	return strings.Join(out, ", ")
}
