package integration

import (
	"context"
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
