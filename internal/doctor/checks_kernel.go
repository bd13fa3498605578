package doctor

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
)

func checkRoot(_ context.Context, h Host, _ Config) Result {
	if h.Euid() != 0 {
		return fail("root", "not running as root; sbx serve must (it mounts filesystems and runs runc), and some checks below need it", "run as root: sudo sbx doctor")
	}
	return ok("root", "running as root")
}

func checkOverlayfs(_ context.Context, h Host, _ Config) Result {
	data, err := os.ReadFile(filepath.Join(h.ProcDir, "filesystems"))
	if err != nil {
		return fail("overlayfs", "cannot read the kernel's filesystems: "+err.Error(), "mount /proc")
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[len(f)-1] == "overlay" {
			return ok("overlayfs", "the kernel has overlayfs")
		}
	}
	return fail("overlayfs", "the kernel has no overlayfs (sandbox root filesystems are overlays)",
		"load it: modprobe overlay (and add overlay to /etc/modules), or use a kernel with CONFIG_OVERLAY_FS")
}

// cgroupControllers are the controllers runc's sandboxes use: limits (cpu,
// memory, pids), accounting, device rules and the freezer (pause).
var (
	cgroupV1Controllers = []string{"cpu", "cpuacct", "memory", "pids", "devices", "freezer"}
	cgroupV2Controllers = []string{"cpu", "memory", "pids"}
)

func checkCgroups(_ context.Context, h Host, _ Config) Result {
	const name = "cgroups"
	const fix = "enable the controller in the kernel (e.g. cgroup_enable=memory on the kernel command line) or boot a kernel that has it"
	if data, err := os.ReadFile(filepath.Join(h.CgroupDir, "cgroup.controllers")); err == nil {
		have := strings.Fields(string(data))
		if missing := without(cgroupV2Controllers, have); len(missing) > 0 {
			return fail(name, "cgroup v2 lacks the controllers "+strings.Join(missing, ", "), fix)
		}
		return ok(name, "cgroup v2 with "+strings.Join(cgroupV2Controllers, ", "))
	}
	f, err := os.Open(filepath.Join(h.ProcDir, "cgroups"))
	if err != nil {
		return fail(name, "no cgroup v2 at "+h.CgroupDir+" and no "+filepath.Join(h.ProcDir, "cgroups"), "mount the cgroup filesystems (systemd does it at boot)")
	}
	defer f.Close()
	var enabled []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// subsys_name hierarchy num_cgroups enabled
		if f := strings.Fields(sc.Text()); len(f) == 4 && f[3] == "1" {
			enabled = append(enabled, f[0])
		}
	}
	if missing := without(cgroupV1Controllers, enabled); len(missing) > 0 {
		return fail(name, "cgroup v1 lacks the controllers "+strings.Join(missing, ", "), fix)
	}
	return ok(name, "cgroup v1 with "+strings.Join(cgroupV1Controllers, ", "))
}

// without returns the elements of want that have lacks.
func without(want, have []string) []string {
	var out []string
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			out = append(out, w)
		}
	}
	return out
}

func checkNamespaces(_ context.Context, h Host, _ Config) Result {
	const name = "namespaces"
	var missing []string
	for _, ns := range []string{"user", "net", "pid", "mnt", "ipc", "uts"} {
		if _, err := os.Lstat(filepath.Join(h.ProcDir, "self/ns", ns)); err != nil {
			missing = append(missing, ns)
		}
	}
	if len(missing) > 0 {
		return fail(name, "the kernel lacks the namespaces "+strings.Join(missing, ", "), "use a kernel built with CONFIG_NAMESPACES, CONFIG_USER_NS, CONFIG_NET_NS, CONFIG_PID_NS")
	}
	if v, err := os.ReadFile(filepath.Join(h.ProcDir, "sys/user/max_user_namespaces")); err == nil && strings.TrimSpace(string(v)) == "0" {
		return warn(name, "user namespaces are turned off (user.max_user_namespaces = 0)", "sysctl -w user.max_user_namespaces=15000 (and set it in /etc/sysctl.d/)")
	}
	return ok(name, "user, net, pid, mount, ipc and uts namespaces")
}

func checkIPForward(_ context.Context, h Host, _ Config) Result {
	const name = "ip_forward"
	v, err := os.ReadFile(filepath.Join(h.ProcDir, "sys/net/ipv4/ip_forward"))
	switch {
	case err != nil:
		return warn(name, "cannot read net.ipv4.ip_forward: "+err.Error(), "make /proc/sys writable for sbx serve: it turns IPv4 forwarding on for sandbox egress")
	case strings.TrimSpace(string(v)) == "1":
		return ok(name, "IPv4 forwarding is on")
	}
	return ok(name, "IPv4 forwarding is off; sbx serve turns it on at start (sandbox egress needs it)")
}
