package runtime

import (
	"slices"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/sbxhq/sbx/internal/errdefs"
)

func testInstance() *Instance {
	return &Instance{
		ID:          "sbx-abc",
		BundleDir:   "/b",
		RootfsDir:   "/r",
		AgentBinary: "/usr/bin/sbx",
		RunDir:      "/run/sbx-abc",
		LogPath:     "/log",
		Hostname:    "box",
		Env:         []string{"A=1"},
		CPU:         1.5,
		MemoryMiB:   256,
		PidsLimit:   512,
	}
}

func TestSpecProcess(t *testing.T) {
	s := Spec(testInstance())
	p := s.Process
	want := []string{"/.sbx/sbx", "agent", "--socket", "/.sbx/run/agent.sock"}
	if !slices.Equal(p.Args, want) {
		t.Errorf("args = %q, want %q", p.Args, want)
	}
	if !slices.Equal(p.Env, []string{"A=1", defaultPath, "GOMAXPROCS=1", "SBX_AGENT_ONLY_ENV=GOMAXPROCS"}) {
		t.Errorf("env = %q", p.Env)
	}
	if p.Cwd != "/" || p.User.UID != 0 || p.User.GID != 0 || !p.NoNewPrivileges || p.Terminal {
		t.Errorf("process = %+v", p)
	}
	n := nofileLimit()
	if len(p.Rlimits) != 1 || p.Rlimits[0] != (specs.POSIXRlimit{Type: "RLIMIT_NOFILE", Hard: n, Soft: n}) {
		t.Errorf("rlimits = %+v", p.Rlimits)
	}
	if s.Hostname != "box" || s.Root.Path != "/r" || s.Root.Readonly {
		t.Errorf("hostname %q root %+v", s.Hostname, s.Root)
	}

	// A caller's PATH and GOMAXPROCS are kept, not doubled (the agent
	// then runs on the caller's GOMAXPROCS and leaves it to its processes).
	inst := testInstance()
	inst.Env = []string{"PATH=/x", "PATHOLOGY=1", "GOMAXPROCS=4"}
	if env := Spec(inst).Process.Env; !slices.Equal(env, inst.Env) {
		t.Errorf("env with PATH = %q", env)
	}
	// A missing hostname falls back to the id.
	inst.Hostname = ""
	if h := Spec(inst).Hostname; h != inst.ID {
		t.Errorf("default hostname = %q", h)
	}
}

func TestSpecCapabilities(t *testing.T) {
	c := Spec(testInstance()).Process.Capabilities
	for _, set := range [][]string{c.Bounding, c.Effective, c.Permitted} {
		if len(set) != 12 || slices.Contains(set, "CAP_NET_RAW") || slices.Contains(set, "CAP_MKNOD") ||
			slices.Contains(set, "CAP_SYS_ADMIN") || !slices.Contains(set, "CAP_KILL") {
			t.Errorf("capability set %q", set)
		}
	}
	if len(c.Ambient) != 0 || len(c.Inheritable) != 0 {
		t.Errorf("ambient %q inheritable %q", c.Ambient, c.Inheritable)
	}
}

func TestSpecLinux(t *testing.T) {
	s := Spec(testInstance())
	var ns []specs.LinuxNamespaceType
	for _, n := range s.Linux.Namespaces {
		if n.Path != "" {
			t.Errorf("namespace %s joins %s; want a fresh one", n.Type, n.Path)
		}
		ns = append(ns, n.Type)
	}
	for _, want := range []specs.LinuxNamespaceType{"pid", "ipc", "uts", "mount", "network"} {
		if !slices.Contains(ns, want) {
			t.Errorf("namespaces %v lack %s", ns, want)
		}
	}
	if slices.Contains(ns, specs.UserNamespace) {
		t.Errorf("namespaces %v include user", ns)
	}

	mounts := map[string]specs.Mount{}
	for _, m := range s.Mounts {
		mounts[m.Destination] = m
	}
	for _, d := range []string{"/proc", "/dev", "/dev/pts", "/dev/shm", "/dev/mqueue", "/sys", "/sys/fs/cgroup"} {
		if _, ok := mounts[d]; !ok {
			t.Errorf("no mount at %s", d)
		}
	}
	if m := mounts[AgentPath]; m.Source != "/usr/bin/sbx" || !slices.Contains(m.Options, "ro") || !slices.Contains(m.Options, "bind") {
		t.Errorf("agent mount %+v", m)
	}
	if m := mounts[RunPath]; m.Source != "/run/sbx-abc" || !slices.Contains(m.Options, "noexec") || slices.Contains(m.Options, "ro") {
		t.Errorf("run dir mount %+v", m)
	}
	if m := mounts["/sys"]; !slices.Contains(m.Options, "ro") {
		t.Errorf("/sys mount %+v is not read-only", m)
	}

	r := s.Linux.Resources
	if *r.CPU.Quota != 150000 || *r.CPU.Period != 100000 {
		t.Errorf("cpu quota %d period %d", *r.CPU.Quota, *r.CPU.Period)
	}
	if *r.Memory.Limit != 256<<20 || (r.Memory.Swap != nil && *r.Memory.Swap != 256<<20) {
		t.Errorf("memory %+v", r.Memory)
	}
	if *r.Pids.Limit != 512 {
		t.Errorf("pids %d", *r.Pids.Limit)
	}
	if d := r.Devices[0]; d.Allow || d.Access != "rwm" || d.Type != "" {
		t.Errorf("first device rule %+v is not deny-all", d)
	}
	if s.Linux.CgroupsPath != "/sbx/sbx-abc" {
		t.Errorf("cgroupsPath %q", s.Linux.CgroupsPath)
	}
	for _, p := range []string{"/proc/kcore", "/proc/keys", "/proc/timer_list", "/proc/sched_debug", "/proc/scsi", "/sys/firmware", "/proc/acpi", "/proc/latency_stats", "/proc/timer_stats"} {
		if !slices.Contains(s.Linux.MaskedPaths, p) {
			t.Errorf("%s is not masked", p)
		}
	}
	if !slices.Contains(s.Linux.ReadonlyPaths, "/proc/sys") || !slices.Contains(s.Linux.ReadonlyPaths, "/proc/sysrq-trigger") {
		t.Errorf("readonly paths %q", s.Linux.ReadonlyPaths)
	}

	// No limits: no cgroup settings beyond devices.
	inst := testInstance()
	inst.CPU, inst.MemoryMiB, inst.PidsLimit = 0, 0, 0
	if r := Spec(inst).Linux.Resources; r.CPU != nil || r.Memory != nil || r.Pids != nil {
		t.Errorf("unlimited resources = %+v", r)
	}
}

func TestSeccompProfile(t *testing.T) {
	sc := Spec(testInstance()).Linux.Seccomp
	if sc.DefaultAction != specs.ActErrno || sc.DefaultErrnoRet == nil || *sc.DefaultErrnoRet != 1 {
		t.Fatalf("default action %s errno %v", sc.DefaultAction, sc.DefaultErrnoRet)
	}
	unconditional := map[string]bool{}
	for _, rule := range sc.Syscalls {
		for _, name := range rule.Names {
			if rule.Action == specs.ActAllow && len(rule.Args) == 0 {
				if unconditional[name] {
					t.Errorf("%s is listed twice", name)
				}
				unconditional[name] = true
			}
			if rule.Action == specs.ActAllow && slices.Contains(deniedSyscalls, name) {
				t.Errorf("denied syscall %s is allowed", name)
			}
		}
		if slices.Equal(rule.Names, []string{"clone3"}) && (rule.Action != specs.ActErrno || *rule.ErrnoRet != 38) {
			t.Errorf("clone3 rule %+v; want ENOSYS", rule)
		}
	}
	for _, name := range []string{"read", "write", "execve", "futex", "rseq", "epoll_pwait", "pidfd_open"} {
		if !unconditional[name] {
			t.Errorf("%s is not allowed", name)
		}
	}
	ptraceOnlyOthers := false
	for _, rule := range sc.Syscalls {
		if slices.Equal(rule.Names, []string{"ptrace"}) && rule.Action == specs.ActAllow {
			ptraceOnlyOthers = slices.Equal(rule.Args, []specs.LinuxSeccompArg{{Index: 1, Value: 1, Op: specs.OpNotEqual}})
		}
	}
	if !ptraceOnlyOthers {
		t.Error("ptrace is not allowed for pids other than 1, or is allowed for pid 1 (the agent)")
	}
	for _, name := range []string{"clone", "socket", "personality", "ptrace"} {
		if unconditional[name] {
			t.Errorf("%s is allowed without an argument filter", name)
		}
	}
	for _, name := range []string{"mount", "umount2", "pivot_root", "kexec_load", "bpf", "unshare", "setns",
		"io_uring_setup", "userfaultfd", "process_vm_readv", "kcmp", "open_by_handle_at"} {
		if !slices.Contains(deniedSyscalls, name) {
			t.Errorf("%s is missing from deniedSyscalls", name)
		}
	}
}

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	good := func() *Instance {
		return &Instance{ID: "ok", BundleDir: dir + "/b", RootfsDir: dir, AgentBinary: "/proc/self/exe",
			RunDir: dir + "/run", LogPath: dir + "/log"}
	}
	if err := validate(good()); err != nil {
		t.Fatalf("valid instance: %v", err)
	}
	cases := map[string]func(*Instance){
		"empty id":      func(i *Instance) { i.ID = "" },
		"slash in id":   func(i *Instance) { i.ID = "a/b" },
		"dot-dot id":    func(i *Instance) { i.ID = ".." },
		"relative path": func(i *Instance) { i.BundleDir = "bundle" },
		"no rootfs":     func(i *Instance) { i.RootfsDir = dir + "/missing" },
		"agent is dir":  func(i *Instance) { i.AgentBinary = dir },
		"negative cpu":  func(i *Instance) { i.CPU = -1 },
		"tiny cpu":      func(i *Instance) { i.CPU = 0.001 },
		"negative mem":  func(i *Instance) { i.MemoryMiB = -1 },
		"bad env":       func(i *Instance) { i.Env = []string{"NOVALUE"} },
	}
	for name, mutate := range cases {
		inst := good()
		mutate(inst)
		if err := validate(inst); !errdefs.Is(err, errdefs.KindInvalid) {
			t.Errorf("%s: err = %v, want Invalid", name, err)
		}
	}
	if err := validate(nil); !errdefs.Is(err, errdefs.KindInvalid) {
		t.Errorf("nil instance: %v", err)
	}
}
