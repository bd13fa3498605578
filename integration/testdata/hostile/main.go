// Command hostile is what an attacker would run inside a sandbox. The
// hostile-code tests build it (static, CGO_ENABLED=0), upload it into a
// sandbox and run it there. It tries, one by one, the syscalls a container
// escape or a host attack starts with, and prints one JSON line per attempt:
// {"check": "...", "errno": "EPERM"} — errno is "" when the attempt worked.
//
//	hostile HOST_PID HOST_MARKER
//
// HOST_PID is a pid on the host (the daemon's); HOST_MARKER is a host file.
// Nothing here can harm the host even if it succeeded: sysrq gets 'h' (help),
// reboot gets CAD_OFF, module loading gets garbage.
package main

import (
	"encoding/json"
	"errors"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

type attempt struct {
	Check string `json:"check"`
	Errno string `json:"errno"`
	Note  string `json:"note,omitempty"`
}

func main() {
	hostPid, _ := strconv.Atoi(os.Args[1])
	marker := os.Args[2]
	enc := json.NewEncoder(os.Stdout)
	try := func(check string, err error, note ...string) {
		a := attempt{Check: check}
		var errno syscall.Errno
		switch {
		case errors.As(err, &errno):
			a.Errno = unix.ErrnoName(errno)
		case err != nil:
			a.Errno = "error"
			a.Note = err.Error()
		}
		if len(note) > 0 {
			a.Note = note[0]
		}
		enc.Encode(a)
	}

	// Raw packets: spoofing on the sandbox network.
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP)
	unix.Close(fd)
	try("raw socket", err)
	fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, int(htons(unix.ETH_P_ALL)))
	unix.Close(fd)
	try("packet socket", err)

	// Mounts: a fresh proc, tmpfs, or a bind of / would undo the masking.
	os.MkdirAll("/tmp/mnt", 0o755)
	try("mount tmpfs", unix.Mount("none", "/tmp/mnt", "tmpfs", 0, ""))
	try("mount proc", unix.Mount("proc", "/tmp/mnt", "proc", 0, ""))
	try("bind mount /", unix.Mount("/", "/tmp/mnt", "", unix.MS_BIND|unix.MS_REC, ""))
	try("remount / rw", unix.Mount("", "/", "", unix.MS_REMOUNT, ""))
	try("umount /proc/kcore mask", unix.Unmount("/proc/kcore", unix.MNT_DETACH))

	// Kernel modules.
	try("init_module", unix.InitModule([]byte("\x7fELF garbage, not a module"), ""))
	f, _ := os.Open("/proc/self/exe")
	err = unix.FinitModule(int(f.Fd()), "", 0)
	f.Close()
	try("finit_module", err)

	// Writes that reach the kernel or the host.
	try("write /proc/sysrq-trigger", writeFile("/proc/sysrq-trigger", "h"))
	try("write /proc/sys/kernel/core_pattern", writeFile("/proc/sys/kernel/core_pattern", "|/tmp/x"))
	try("write /proc/sys/kernel/modprobe", writeFile("/proc/sys/kernel/modprobe", "/tmp/x"))
	try("write /sys/kernel/uevent_helper", writeFile("/sys/kernel/uevent_helper", "/tmp/x"))
	try("write cgroup pids.max", writeAny("/sys/fs/cgroup/pids/pids.max", "/sys/fs/cgroup/pids.max"))
	try("write cgroup release_agent", writeAny("/sys/fs/cgroup/memory/release_agent", "/sys/fs/cgroup/pids/release_agent", "/sys/fs/cgroup/release_agent"))
	try("read /proc/kcore", readSome("/proc/kcore"))
	try("reboot (CAD off)", unix.Reboot(unix.LINUX_REBOOT_CMD_CAD_OFF))

	// Devices: no host disk or memory, and no way to make a node.
	try("mknod block 8:0", unix.Mknod("/tmp/sda", unix.S_IFBLK|0o600, int(unix.Mkdev(8, 0))))
	try("mknod char 1:1 (mem)", unix.Mknod("/tmp/mem", unix.S_IFCHR|0o600, int(unix.Mkdev(1, 1))))
	for _, dev := range []string{"/dev/sda", "/dev/vda", "/dev/nvme0n1", "/dev/mem", "/dev/kmem", "/dev/port", "/dev/kmsg"} {
		try("open "+dev, readSome(dev))
	}

	// Namespaces and other attack surface behind seccomp.
	try("unshare user namespace", unix.Unshare(unix.CLONE_NEWUSER))
	try("unshare mount namespace", unix.Unshare(unix.CLONE_NEWNS))
	if nsf, err := os.Open("/proc/1/ns/mnt"); err == nil {
		try("setns", unix.Setns(int(nsf.Fd()), 0))
		nsf.Close()
	}
	_, _, e := unix.Syscall(unix.SYS_KEYCTL, 0 /* KEYCTL_GET_KEYRING_ID */, ^uintptr(2) /* session */, 0)
	try("keyctl", errnoOrNil(e))
	_, _, e = unix.Syscall(unix.SYS_BPF, 0 /* BPF_MAP_CREATE */, 0, 0)
	try("bpf", errnoOrNil(e))
	attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_CPU_CLOCK}
	attr.Size = uint32(unsafe.Sizeof(attr))
	pfd, err := unix.PerfEventOpen(&attr, 0, -1, -1, 0)
	unix.Close(pfd)
	try("perf_event_open", err)
	_, _, e = unix.Syscall(unix.SYS_USERFAULTFD, 0, 0, 0)
	try("userfaultfd", errnoOrNil(e))
	_, _, e = unix.Syscall(unix.SYS_IO_URING_SETUP, 1, 0, 0)
	try("io_uring_setup", errnoOrNil(e))
	_, _, e = unix.Syscall6(unix.SYS_KEXEC_LOAD, 0, 0, 0, 0, 0, 0)
	try("kexec_load", errnoOrNil(e))
	// The "shocker" escape: open a host file by handle.
	_, _, err = unix.NameToHandleAt(unix.AT_FDCWD, "/etc/hostname", 0)
	try("name_to_handle_at", err)
	h := unix.NewFileHandle(1, []byte{2, 0, 0, 0, 0, 0, 0, 0})
	hfd, err := unix.OpenByHandleAt(unix.AT_FDCWD, h, unix.O_RDONLY)
	unix.Close(hfd)
	try("open_by_handle_at", err)

	// Host processes: not visible, so neither traceable nor killable.
	try("kill -0 host pid", unix.Kill(hostPid, 0))
	try("ptrace attach host pid", unix.PtraceAttach(hostPid))
	try("open /proc/HOST_PID/root", readSome("/proc/"+strconv.Itoa(hostPid)+"/root/etc/hostname"))

	// The agent (PID 1): tracing it would let code inside stop it and jam
	// the daemon; its memory holds nothing for the sandbox to read.
	try("ptrace attach pid 1", tracePid1(false))
	try("ptrace seize pid 1", tracePid1(true))
	try("read /proc/1/mem", readSome("/proc/1/mem"))
	try("read /proc/1/environ", readSome("/proc/1/environ"))

	// A chroot escape (chroot into a subdir, climb out with ".."): at best
	// it reaches the sandbox's own root, never the host marker.
	try("read host marker after chroot escape", chrootEscape(marker))
}

// tracePid1 attaches to pid 1 and, should that work, lets it go again at
// once, so a failed check does not leave the agent stopped.
func tracePid1(seize bool) error {
	runtime.LockOSThread() // ptrace belongs to the tracing thread
	defer runtime.UnlockOSThread()
	attach := unix.PtraceAttach
	if seize {
		attach = unix.PtraceSeize
	}
	if err := attach(1); err != nil {
		return err
	}
	if seize {
		unix.PtraceInterrupt(1)
	}
	var ws unix.WaitStatus
	unix.Wait4(1, &ws, unix.WALL, nil)
	unix.PtraceDetach(1)
	return nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func errnoOrNil(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

func writeFile(path, data string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(data)
	return err
}

// writeAny tries each path and reports the first that exists.
func writeAny(paths ...string) error {
	var last error = syscall.ENOENT
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return writeFile(p, "max")
		}
	}
	return last
}

// readSome reads a byte; an empty read counts as a failure (ENODATA): masked
// paths are bind-mounted /dev/null.
func readSome(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	n, err := f.Read(make([]byte, 1))
	if n == 0 && err != nil {
		return syscall.ENODATA
	}
	return err
}

func chrootEscape(marker string) error {
	if err := os.MkdirAll("/tmp/jail", 0o755); err != nil {
		return err
	}
	dir, err := os.Open("/")
	if err != nil {
		return err
	}
	if err := unix.Chroot("/tmp/jail"); err != nil {
		return err
	}
	if err := unix.Fchdir(int(dir.Fd())); err != nil {
		return err
	}
	for range 64 {
		unix.Chdir("..")
	}
	if err := unix.Chroot("."); err != nil {
		return err
	}
	_, err = os.ReadFile(marker)
	return err
}
