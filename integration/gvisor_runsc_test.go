package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// Which runsc the daemon runs: SBX_RUNSC (scripts/test.sh sets it to the
// runsc of scripts/build-runsc.sh), else sbx's own at bundledRunsc, else
// Debian's on PATH, with a warning. These tests cover the choice, a smaller
// run on Debian's runsc, and the daemon reaping runsc's processes.

// bundledRunsc is runtime.BundledRunsc.
const bundledRunsc = "/usr/local/lib/sbx/runsc"

// debianRunsc is the runsc of Debian's package.
const debianRunsc = "/usr/bin/runsc"

// daemonRunsc is the runsc binary a daemon with serve flags args runs.
func daemonRunsc(args []string) string {
	if i := slices.Index(args, "--runsc"); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	if b := os.Getenv("SBX_RUNSC"); b != "" { // the daemon inherits it
		return b
	}
	if _, err := os.Stat(bundledRunsc); err == nil {
		return bundledRunsc
	}
	return "runsc"
}

// daemonLog is what the daemon has logged so far.
func (d *daemon) daemonLog() string {
	b, _ := os.ReadFile(filepath.Join(d.dataDir, "daemon.log"))
	return string(b)
}

// zombieChildren lists the daemon's children that have exited and wait to
// be reaped.
func (d *daemon) zombieChildren() []int {
	var out []int
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(d.cmd.Process.Pid) + "/task/*/children")
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, field := range strings.Fields(string(b)) {
			stat, err := os.ReadFile("/proc/" + field + "/stat")
			if i := strings.LastIndexByte(string(stat), ')'); err == nil && i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
				pid, _ := strconv.Atoi(field)
				out = append(out, pid)
			}
		}
	}
	return out
}

// TestGVisorDebianRunsc is the smaller run on Debian's runsc (ptrace):
// start, exec, pause with memory, resume, and the daemon's choice in its
// log. runsc's processes end up the daemon's children (it is their child
// subreaper) and are reaped: no zombie stays behind a pause.
func TestGVisorDebianRunsc(t *testing.T) {
	if _, err := os.Stat(debianRunsc); err != nil {
		t.Skip("needs Debian's runsc (apt-get install runsc)")
	}
	d := gvisorDaemon(t, "--runsc", debianRunsc)
	if log := d.daemonLog(); !strings.Contains(log, "runsc="+debianRunsc+" platform=ptrace") {
		t.Errorf("the daemon does not say it runs %s on ptrace:\n%s", debianRunsc, log)
	}
	ctx := context.Background()
	d.create(sdk.CreateSandboxRequest{Name: "deb", Class: "gvisor", Network: sdk.NetworkNone})
	d.exec("deb", "echo 7 > /tmp/mem")
	if _, err := d.client.PauseSandbox(ctx, "deb"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the daemon reaps runsc's exited processes", func() bool { return len(d.zombieChildren()) == 0 })
	if _, err := d.client.ResumeSandbox(ctx, "deb"); err != nil {
		t.Fatal(err)
	}
	if got := d.exec("deb", "cat /tmp/mem; dmesg | head -1 | grep -c gVisor"); got != "7\n1" {
		t.Errorf("after resume on Debian's runsc: %q, want the memory-only file and gVisor's dmesg", got)
	}
}

// TestGVisorRunscChoice: with no runsc named, the daemon runs sbx's own if
// installed, else falls back to Debian's and warns; gvisor sandboxes work
// either way. With SBX_RUNSC it runs that one on systrap where it has it.
func TestGVisorRunscChoice(t *testing.T) {
	named := os.Getenv("SBX_RUNSC")
	t.Setenv("SBX_RUNSC", "") // the daemon inherits the test's environment
	d := gvisorDaemon(t, "--network", "none")
	log := d.daemonLog()
	if _, err := os.Stat(bundledRunsc); err == nil {
		if !strings.Contains(log, "runsc="+bundledRunsc+" platform=systrap") || strings.Contains(log, "using Debian's runsc") {
			t.Errorf("sbx's own runsc is installed, but the daemon does not say it runs it on systrap:\n%s", log)
		}
	} else if !strings.Contains(log, "using Debian's runsc") || !strings.Contains(log, "runsc="+debianRunsc+" platform=ptrace") {
		t.Errorf("without sbx's own runsc, the daemon does not warn that it falls back to Debian's:\n%s", log)
	}
	d.create(sdk.CreateSandboxRequest{Name: "choice", Class: "gvisor"})
	if got := d.exec("choice", "dmesg | head -1 | grep -c gVisor"); got != "1" {
		t.Errorf("not in gVisor: %q", got)
	}
	if named == "" {
		return
	}
	out, _ := exec.Command(named, "flags").CombinedOutput()
	if !strings.Contains(string(out), "systrap") {
		return
	}
	// Instances stay with the runsc that started them: none is left when
	// the daemon changes runsc.
	if err := d.client.DeleteSandbox(context.Background(), "choice", true); err != nil {
		t.Fatal(err)
	}
	d.stop()
	d.args = append(d.args, "--runsc", named)
	d.start()
	if log := d.daemonLog(); !strings.Contains(log, "runsc="+named+" platform=systrap") {
		t.Errorf("with --runsc %s the daemon does not say it runs it on systrap:\n%s", named, log)
	}
}

// TestGVisorPrecompiledFilters: sbx's runsc (scripts/build-runsc.sh) starts
// and restores a sandbox with the seccomp filters it precompiled, in the
// sandbox process and in the gofer, and compiles none at run time (which
// cost 42–60 ms of every start and restore): runsc's debug log, which a
// wrapper turns on, says which it did.
func TestGVisorPrecompiledFilters(t *testing.T) {
	runsc := os.Getenv("SBX_RUNSC")
	if runsc == "" {
		t.Skip("needs SBX_RUNSC (scripts/build-runsc.sh; scripts/test.sh sets it)")
	}
	logs := t.TempDir()
	wrapper := filepath.Join(t.TempDir(), "runsc")
	script := "#!/bin/sh\nexec " + runsc + " --debug --debug-log=" + logs + "/ \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	d := gvisorDaemon(t, "--runsc", wrapper, "--runsc-platform", "systrap")
	ctx := context.Background()
	d.create(sdk.CreateSandboxRequest{Name: "pre", Class: "gvisor"})
	if _, err := d.client.PauseSandbox(ctx, "pre"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.client.ResumeSandbox(ctx, "pre"); err != nil {
		t.Fatal(err)
	}
	if got := d.exec("pre", "echo up"); got != "up" {
		t.Fatalf("after resume: %q", got)
	}
	var precompiled, compiled int
	files, _ := filepath.Glob(filepath.Join(logs, "*"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		precompiled += strings.Count(string(b), "Loaded precompiled seccomp instructions")
		compiled += strings.Count(string(b), "building seccomp program from scratch")
	}
	// A start and a restore: each runs a sandbox process and a gofer.
	if precompiled < 4 || compiled > 0 {
		t.Errorf("seccomp filters: %d precompiled, %d compiled at run time, in %d runsc logs; want at least 4 and 0", precompiled, compiled, len(files))
	}
}
