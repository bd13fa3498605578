package integration

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/sdk"
)

// TestInstanceHardening checks what code inside a sandbox can and cannot do.
func TestInstanceHardening(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{Name: "hard", MemoryMiB: 128, PidsLimit: 64, CPU: 0.5})
	run := func(shell string) *sdk.ExecResult {
		t.Helper()
		res, err := d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: shell})
		if err != nil {
			t.Fatalf("%s: %v", shell, err)
		}
		return res
	}
	if res := run("grep NoNewPrivs /proc/self/status"); !strings.Contains(res.Stdout, "1") {
		t.Errorf("no_new_privs not set: %q", res.Stdout)
	}
	// Docker's default capabilities without NET_RAW and MKNOD.
	res := run("grep CapEff /proc/self/status")
	capEff, err := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(res.Stdout, "CapEff:")), 16, 64)
	if err != nil {
		t.Fatalf("CapEff %q: %v", res.Stdout, err)
	}
	const capSysAdmin, capNetRaw, capMknod, capChown = 21, 13, 27, 0
	for _, c := range []uint{capSysAdmin, capNetRaw, capMknod} {
		if capEff&(1<<c) != 0 {
			t.Errorf("capability %d is effective (CapEff %x)", c, capEff)
		}
	}
	if capEff&(1<<capChown) == 0 {
		t.Errorf("CAP_CHOWN missing (CapEff %x)", capEff)
	}
	for _, denied := range []string{
		"mount -t tmpfs none /mnt",
		"echo b > /proc/sysrq-trigger",
		"ping -c 1 -W 1 127.0.0.1",
		"cat /proc/kcore | head -c 1 | wc -c | grep -q 1",
		"mknod /tmp/sda b 8 0",
	} {
		if res := run(denied + " 2>/dev/null"); res.ExitCode == 0 {
			t.Errorf("%q succeeded inside the sandbox", denied)
		}
	}
	if res := run("hostname"); res.Stdout != "hard\n" {
		t.Errorf("hostname = %q", res.Stdout)
	}
	// PID 1 is the agent, and the sandbox sees only its own processes.
	if res := run("cat /proc/1/cmdline | tr '\\0' ' '"); !strings.Contains(res.Stdout, "agent") {
		t.Errorf("PID 1 = %q", res.Stdout)
	}
	// Its own network namespace: loopback and the veth to the sbx bridge
	// (network none, loopback only, is checked in network_test.go).
	if res := run("ls /sys/class/net"); strings.Join(strings.Fields(res.Stdout), " ") != "eth0 lo" {
		t.Errorf("network interfaces = %q", res.Stdout)
	}
	// The cgroup limits are the ones asked for.
	for _, c := range []struct{ ctrl, file, want string }{
		{"memory", "memory.limit_in_bytes", strconv.Itoa(128 << 20)},
		{"pids", "pids.max", "64"},
		{"cpu", "cpu.cfs_quota_us", "50000"},
	} {
		if got, err := readCgroup(c.ctrl, sb.ID, c.file); err != nil || got != c.want { // cgroup_test.go
			t.Errorf("%s = %q (%v), want %s", c.file, got, err, c.want)
		}
	}
	// The agent binary is read-only inside.
	if res := run("echo x > /.sbx/sbx"); res.ExitCode == 0 {
		t.Error("the agent binary is writable inside the sandbox")
	}
}

// TestDiskLimitBypass: every path inside a sandbox that writes to the host
// outside the sandbox's disk is capped or read-only (issue 13.2): the run
// directory (a capped tmpfs), /etc/resolv.conf (read-only) and the agent's
// own stdout and stderr (not reachable; the host's instance log stays small).
func TestDiskLimitBypass(t *testing.T) {
	for _, class := range []string{"container", "gvisor"} {
		t.Run(class, func(t *testing.T) {
			var d *daemon
			if class == "gvisor" {
				d = gvisorDaemon(t)
			} else {
				d = startDaemon(t)
			}
			ctx := context.Background()
			sb := d.create(sdk.CreateSandboxRequest{Class: class})
			run := func(shell string) *sdk.ExecResult {
				t.Helper()
				res, err := d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: shell, TimeoutSeconds: 60})
				if err != nil {
					t.Fatalf("%s: %v", shell, err)
				}
				return res
			}
			dir := filepath.Join(d.dataDir, "sandboxes", sb.ID)
			hostLog := filepath.Join(dir, "agent.log") // the runtime's Instance.LogPath
			logBefore := fileSize(hostLog)

			// The run directory: full at its cap, and the host sees no more.
			const capMiB = 20 // runtime.RunDirMiB
			res := run("dd if=/dev/zero of=/.sbx/run/fill bs=1M count=64")
			if res.ExitCode == 0 || !strings.Contains(res.Stderr, "No space left") {
				t.Errorf("filling the run directory: exit %d, %s", res.ExitCode, res.Stderr)
			}
			if n := fileSize(filepath.Join(dir, "run", "fill")); n > capMiB<<20 {
				t.Errorf("the run directory took %d bytes on the host, cap %d MiB", n, capMiB)
			}
			if res := run("rm /.sbx/run/fill && echo ok"); res.Stdout != "ok\n" {
				t.Errorf("the agent after a full run directory: %+v", res)
			}

			// resolv.conf is read-only.
			res = run("echo nameserver 10.0.0.1 >> /etc/resolv.conf")
			if res.ExitCode == 0 || !strings.Contains(res.Stderr, "Read-only") {
				t.Errorf("writing /etc/resolv.conf: exit %d, %s", res.ExitCode, res.Stderr)
			}

			// The agent's stdout and stderr: not writable from inside (runc:
			// the agent is not dumpable), or at most into the capped run
			// directory (gVisor); never into the host's instance log.
			for _, fd := range []string{"1", "2"} {
				res = run("head -c 4194304 /dev/zero > /proc/1/fd/" + fd)
				if class == "container" && (res.ExitCode == 0 || !strings.Contains(res.Stderr, "denied")) {
					t.Errorf("writing /proc/1/fd/%s: exit %d, %s", fd, res.ExitCode, res.Stderr)
				}
			}
			if grown := fileSize(hostLog) - logBefore; grown > 64<<10 {
				t.Errorf("the host's instance log grew by %d bytes", grown)
			}
			// The instance's mountinfo names the host's data directory only
			// for the agent binary (issue 13.9, docs/security.md, "Host paths"): overlay
			// layers are mounted through neutral paths, resolv.conf comes
			// from the run directory's tmpfs.
			for _, line := range strings.Split(run("cat /proc/self/mountinfo").Stdout, "\n") {
				if strings.Contains(line, d.dataDir) && !strings.Contains(line, " /.sbx/sbx ") {
					t.Errorf("mountinfo shows the data directory: %s", line)
				}
			}
			if res := run("echo alive"); res.Stdout != "alive\n" {
				t.Errorf("the agent at the end: %+v", res)
			}
		})
	}
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}
