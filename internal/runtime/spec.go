package runtime

import (
	"os"
	"strconv"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/agentapi"
)

// defaultPath is the PATH the agent gets when the caller sets none.
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// capabilities is Docker's default set minus CAP_NET_RAW (no raw sockets:
// no packet spoofing on the sandbox network) and CAP_MKNOD (no device nodes).
var capabilities = []string{
	"CAP_CHOWN",
	"CAP_DAC_OVERRIDE",
	"CAP_FSETID",
	"CAP_FOWNER",
	"CAP_SETGID",
	"CAP_SETUID",
	"CAP_SETFCAP",
	"CAP_SETPCAP",
	"CAP_NET_BIND_SERVICE",
	"CAP_SYS_CHROOT",
	"CAP_KILL",
	"CAP_AUDIT_WRITE",
}

// maskedPaths hide host information (and side channels) under /proc and /sys;
// Docker's default list.
var maskedPaths = []string{
	"/proc/acpi",
	"/proc/asound",
	"/proc/interrupts",
	"/proc/kcore",
	"/proc/keys",
	"/proc/latency_stats",
	"/proc/timer_list",
	"/proc/timer_stats",
	"/proc/sched_debug",
	"/proc/scsi",
	"/sys/firmware",
	"/sys/devices/virtual/powercap",
}

var readonlyPaths = []string{
	"/proc/bus",
	"/proc/fs",
	"/proc/irq",
	"/proc/sys",
	"/proc/sysrq-trigger",
}

// Spec returns the OCI runtime spec for inst: the agent as PID 1 in fresh
// namespaces, with reduced capabilities, a seccomp allow-list, cgroup limits
// and the agent binary and socket directory bind-mounted under /.sbx.
func Spec(inst *Instance) *specs.Spec {
	env := append([]string(nil), inst.Env...)
	if !hasKey(env, "PATH") {
		env = append(env, defaultPath)
	}
	if !hasKey(env, "GOMAXPROCS") && !hasKey(env, agentapi.AgentOnlyEnv) {
		// The agent's Go runtime on one P costs an idle sandbox 0.4 MiB
		// less (internal/agent/tune.go); the agent takes both variables
		// out of the environment its processes inherit.
		env = append(env, "GOMAXPROCS=1", agentapi.AgentOnlyEnv+"=GOMAXPROCS")
	}
	nofile := nofileLimit()
	hostname := inst.Hostname
	if hostname == "" {
		hostname = inst.ID
	}
	return &specs.Spec{
		Version: specs.Version,
		Process: &specs.Process{
			Args: []string{AgentPath, "agent", "--socket", RunPath + "/" + AgentSock},
			Env:  env,
			Cwd:  "/",
			User: specs.User{UID: 0, GID: 0},
			Capabilities: &specs.LinuxCapabilities{
				Bounding:  capabilities,
				Effective: capabilities,
				Permitted: capabilities,
			},
			Rlimits:         []specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: nofile, Soft: nofile}},
			NoNewPrivileges: true,
		},
		Root:     &specs.Root{Path: inst.RootfsDir},
		Hostname: hostname,
		Mounts:   mounts(inst),
		Linux: &specs.Linux{
			Namespaces:    namespaces(inst.NetNSPath),
			Resources:     resources(inst),
			CgroupsPath:   cgroupsPath(inst.ID),
			Seccomp:       defaultSeccomp(),
			MaskedPaths:   maskedPaths,
			ReadonlyPaths: readonlyPaths,
		},
	}
}

func hasKey(env []string, key string) bool {
	for _, kv := range env {
		if len(kv) > len(key) && kv[:len(key)] == key && kv[len(key)] == '=' {
			return true
		}
	}
	return false
}

// namespaces are all fresh but the network namespace when netns names one
// (made and wired by the network package); a fresh one has only loopback
// (runc brings it up).
func namespaces(netns string) []specs.LinuxNamespace {
	ns := []specs.LinuxNamespace{
		{Type: specs.PIDNamespace},
		{Type: specs.IPCNamespace},
		{Type: specs.UTSNamespace},
		{Type: specs.MountNamespace},
		{Type: specs.NetworkNamespace, Path: netns},
	}
	if _, err := os.Stat("/proc/self/ns/cgroup"); err == nil {
		ns = append(ns, specs.LinuxNamespace{Type: specs.CgroupNamespace})
	}
	return ns
}

// mounts are runc's default set (what `runc spec` writes) plus the agent
// and, when set, the sandbox's resolv.conf (read-only: a writable bind of a
// host file would be a way around the disk limit).
func mounts(inst *Instance) []specs.Mount {
	m := []specs.Mount{
		{Destination: "/proc", Type: "proc", Source: "proc"},
		{Destination: "/dev", Type: "tmpfs", Source: "tmpfs",
			Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
		{Destination: "/dev/pts", Type: "devpts", Source: "devpts",
			Options: []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"}},
		{Destination: "/dev/shm", Type: "tmpfs", Source: "shm",
			Options: []string{"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}},
		{Destination: "/dev/mqueue", Type: "mqueue", Source: "mqueue",
			Options: []string{"nosuid", "noexec", "nodev"}},
		{Destination: "/sys", Type: "sysfs", Source: "sysfs",
			Options: []string{"nosuid", "noexec", "nodev", "ro"}},
		{Destination: "/sys/fs/cgroup", Type: "cgroup", Source: "cgroup",
			Options: []string{"nosuid", "noexec", "nodev", "relatime", "ro"}},
		{Destination: AgentPath, Type: "bind", Source: inst.AgentBinary,
			Options: []string{"bind", "ro", "nosuid", "nodev"}},
		{Destination: RunPath, Type: "bind", Source: inst.RunDir,
			Options: []string{"bind", "rw", "nosuid", "nodev", "noexec"}},
	}
	if inst.ResolvConf != "" {
		m = append(m, specs.Mount{Destination: "/etc/resolv.conf", Type: "bind", Source: resolvCopy(inst),
			Options: []string{"bind", "ro", "nosuid", "nodev", "noexec"}})
	}
	if inst.CABundle != "" {
		for _, dst := range CABundlePaths {
			m = append(m, specs.Mount{Destination: dst, Type: "bind", Source: inst.CABundle,
				Options: []string{"bind", "ro", "nosuid", "nodev", "noexec"}})
		}
	}
	for _, v := range inst.Volumes {
		mode := "rw"
		if v.ReadOnly {
			mode = "ro"
		}
		m = append(m, specs.Mount{Destination: v.Destination, Type: "bind", Source: v.Source,
			Options: []string{"rbind", mode, "nosuid", "nodev"}})
	}
	return m
}

// resources turns the instance's limits into cgroup settings. Memory and
// memory+swap are the same number: a sandbox never swaps.
func resources(inst *Instance) *specs.LinuxResources {
	r := &specs.LinuxResources{Devices: allowedDevices()}
	if inst.CPU > 0 {
		period := uint64(cpuPeriod)
		quota := int64(inst.CPU * cpuPeriod)
		r.CPU = &specs.LinuxCPU{Quota: &quota, Period: &period}
	}
	if inst.MemoryMiB > 0 {
		limit := int64(inst.MemoryMiB) << 20
		r.Memory = &specs.LinuxMemory{Limit: &limit}
		if swapAccounting() {
			r.Memory.Swap = &limit
		}
	}
	if inst.PidsLimit > 0 {
		pids := int64(inst.PidsLimit)
		r.Pids = &specs.LinuxPids{Limit: &pids}
	}
	return r
}

// cpuPeriod is the CFS period in microseconds; the quota is CPU cores times it.
const cpuPeriod = 100000

// allowedDevices denies every device, then allows the ones runc creates in
// /dev: null, zero, full, random, urandom, tty, ptmx and the pty slaves.
func allowedDevices() []specs.LinuxDeviceCgroup {
	char := func(major, minor int64) specs.LinuxDeviceCgroup {
		d := specs.LinuxDeviceCgroup{Allow: true, Type: "c", Major: &major, Access: "rwm"}
		if minor >= 0 {
			d.Minor = &minor
		}
		return d
	}
	return []specs.LinuxDeviceCgroup{
		{Allow: false, Access: "rwm"},
		char(1, 3),    // null
		char(1, 5),    // zero
		char(1, 7),    // full
		char(1, 8),    // random
		char(1, 9),    // urandom
		char(5, 0),    // tty
		char(5, 2),    // ptmx
		char(136, -1), // pts/*
	}
}

// cgroupsPath puts every instance under one "sbx" parent in each hierarchy
// (cgroupfs driver), so sbx's cgroups are easy to find and clean.
func cgroupsPath(id string) string { return "/sbx/" + id }

// maxNofile is the open-files limit every instance gets where the host allows.
const maxNofile = 1048576

// nofileLimit returns maxNofile, or less where the host cannot grant it: a
// limit above our own hard limit needs CAP_SYS_RESOURCE (some hosts, such as
// containers running sbx, lack it), and none can pass fs.nr_open.
func nofileLimit() uint64 {
	limit := uint64(maxNofile)
	if b, err := os.ReadFile("/proc/sys/fs/nr_open"); err == nil {
		if n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && n < limit {
			limit = n
		}
	}
	if !hasCapability(unix.CAP_SYS_RESOURCE) {
		var rl unix.Rlimit
		if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err == nil && rl.Max < limit {
			limit = rl.Max
		}
	}
	return limit
}

// hasCapability reports whether this process has capability c in its
// effective set.
func hasCapability(c int) bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && mask&(1<<c) != 0
		}
	}
	return false
}
