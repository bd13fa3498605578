package runtime

import (
	goruntime "runtime"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// The seccomp profile is an allow-list: every syscall not named here fails
// with EPERM. It follows Docker's default profile for a container without
// CAP_SYS_ADMIN, with a few more denials (deniedSyscalls below).
//
// Choices worth knowing:
//   - ptrace is allowed, so strace and debuggers work inside a sandbox. Since
//     Linux 4.8 seccomp is re-checked after a tracer changes a syscall, so
//     ptrace cannot be used to escape the filter; the pid namespace keeps it
//     to the sandbox's own processes. process_vm_readv/writev and kcmp are
//     denied all the same. ptrace of pid 1 (the agent) is refused: the agent
//     is also non-dumpable, and this filter is the second lock on that door.
//   - clone is allowed only without namespace flags; clone3 cannot be
//     filtered by its flags (they are behind a pointer), so it fails with
//     ENOSYS and libc falls back to clone.
//   - socket is allowed for every family but AF_VSOCK.
//   - Names libseccomp does not know are skipped by runc, so newer syscalls
//     may be listed; runc makes syscalls newer than any in the filter fail
//     with ENOSYS rather than EPERM, so programs fall back to older calls.
var allowedSyscalls = []string{
	"accept", "accept4", "access", "adjtimex", "alarm", "bind", "brk",
	"cachestat", "capget", "capset", "chdir", "chmod", "chown", "chown32", "chroot",
	"clock_adjtime", "clock_adjtime64", "clock_getres", "clock_getres_time64",
	"clock_gettime", "clock_gettime64", "clock_nanosleep", "clock_nanosleep_time64",
	"close", "close_range", "connect", "copy_file_range", "creat",
	"dup", "dup2", "dup3",
	"epoll_create", "epoll_create1", "epoll_ctl", "epoll_ctl_old", "epoll_pwait",
	"epoll_pwait2", "epoll_wait", "epoll_wait_old", "eventfd", "eventfd2",
	"execve", "execveat", "exit", "exit_group",
	"faccessat", "faccessat2", "fadvise64", "fadvise64_64", "fallocate",
	"fchdir", "fchmod", "fchmodat", "fchmodat2", "fchown", "fchown32", "fchownat",
	"fcntl", "fcntl64", "fdatasync", "fgetxattr", "flistxattr", "flock", "fork",
	"fremovexattr", "fsetxattr", "fstat", "fstat64", "fstatat64", "fstatfs",
	"fstatfs64", "fsync", "ftruncate", "ftruncate64",
	"futex", "futex_requeue", "futex_time64", "futex_wait", "futex_waitv", "futex_wake",
	"futimesat",
	"getcpu", "getcwd", "getdents", "getdents64", "getegid", "getegid32",
	"geteuid", "geteuid32", "getgid", "getgid32", "getgroups", "getgroups32",
	"getitimer", "getpeername", "getpgid", "getpgrp", "getpid", "getppid",
	"getpriority", "getrandom", "getresgid", "getresgid32", "getresuid",
	"getresuid32", "getrlimit", "get_robust_list", "getrusage", "getsid",
	"getsockname", "getsockopt", "get_thread_area", "gettid", "gettimeofday",
	"getuid", "getuid32", "getxattr", "getxattrat",
	"inotify_add_watch", "inotify_init", "inotify_init1", "inotify_rm_watch",
	"io_cancel", "ioctl", "io_destroy", "io_getevents", "io_pgetevents",
	"io_pgetevents_time64", "ioprio_get", "ioprio_set", "io_setup", "io_submit",
	"ipc", "kill",
	"landlock_add_rule", "landlock_create_ruleset", "landlock_restrict_self",
	"lchown", "lchown32", "lgetxattr", "link", "linkat", "listen", "listxattr",
	"listxattrat", "llistxattr", "_llseek", "lremovexattr", "lseek", "lsetxattr",
	"lstat", "lstat64",
	"madvise", "map_shadow_stack", "membarrier", "memfd_create", "memfd_secret",
	"mincore", "mkdir", "mkdirat", "mknod", "mknodat", "mlock", "mlock2",
	"mlockall", "mmap", "mmap2", "mprotect", "mq_getsetattr", "mq_notify",
	"mq_open", "mq_timedreceive", "mq_timedreceive_time64", "mq_timedsend",
	"mq_timedsend_time64", "mq_unlink", "mremap", "mseal", "msgctl", "msgget",
	"msgrcv", "msgsnd", "msync", "munlock", "munlockall", "munmap",
	"nanosleep", "newfstatat", "_newselect",
	"open", "openat", "openat2",
	"pause", "pidfd_open", "pidfd_send_signal", "pipe", "pipe2",
	"pkey_alloc", "pkey_free", "pkey_mprotect", "poll", "ppoll", "ppoll_time64",
	"prctl", "pread64", "preadv", "preadv2", "prlimit64", "process_mrelease",
	"pselect6", "pselect6_time64", "pwrite64", "pwritev", "pwritev2",
	"read", "readahead", "readlink", "readlinkat", "readv", "recv", "recvfrom",
	"recvmmsg", "recvmmsg_time64", "recvmsg", "remap_file_pages", "removexattr",
	"removexattrat", "rename", "renameat", "renameat2", "restart_syscall", "rmdir",
	"rseq", "rt_sigaction", "rt_sigpending", "rt_sigprocmask", "rt_sigqueueinfo",
	"rt_sigreturn", "rt_sigsuspend", "rt_sigtimedwait", "rt_sigtimedwait_time64",
	"rt_tgsigqueueinfo",
	"sched_getaffinity", "sched_getattr", "sched_getparam",
	"sched_get_priority_max", "sched_get_priority_min", "sched_getscheduler",
	"sched_rr_get_interval", "sched_rr_get_interval_time64", "sched_setaffinity",
	"sched_setattr", "sched_setparam", "sched_setscheduler", "sched_yield",
	"seccomp", "select", "semctl", "semget", "semop", "semtimedop",
	"semtimedop_time64", "send", "sendfile", "sendfile64", "sendmmsg", "sendmsg",
	"sendto", "setfsgid", "setfsgid32", "setfsuid", "setfsuid32", "setgid",
	"setgid32", "setgroups", "setgroups32", "setitimer", "setpgid", "setpriority",
	"setregid", "setregid32", "setresgid", "setresgid32", "setresuid",
	"setresuid32", "setreuid", "setreuid32", "setrlimit", "set_robust_list",
	"setsid", "setsockopt", "set_thread_area", "set_tid_address", "setuid",
	"setuid32", "setxattr", "setxattrat", "shmat", "shmctl", "shmdt", "shmget",
	"shutdown", "sigaltstack", "signalfd", "signalfd4", "sigprocmask", "sigreturn",
	"socketcall", "socketpair", "splice", "stat", "stat64", "statfs", "statfs64",
	"statx", "symlink", "symlinkat", "sync", "sync_file_range", "syncfs", "sysinfo",
	"tee", "tgkill", "time", "timer_create", "timer_delete", "timer_getoverrun",
	"timer_gettime", "timer_gettime64", "timer_settime", "timer_settime64",
	"timerfd_create", "timerfd_gettime", "timerfd_gettime64", "timerfd_settime",
	"timerfd_settime64", "times", "tkill", "truncate", "truncate64",
	"ugetrlimit", "umask", "uname", "unlink", "unlinkat", "utime", "utimensat",
	"utimensat_time64", "utimes",
	"vfork", "vmsplice", "wait4", "waitid", "waitpid", "write", "writev",
}

// archSyscalls are allowed only on some architectures.
var archSyscalls = map[string][]string{
	"amd64": {"arch_prctl", "modify_ldt"},
	"arm64": {"arm_fadvise64_64", "arm_sync_file_range", "sync_file_range2", "breakpoint", "cacheflush", "set_tls"},
}

// deniedSyscalls must never be in the allow-list (a test checks). They change
// the host or the kernel, escape the namespaces, or open a large kernel attack
// surface (bpf, io_uring, userfaultfd, perf, keyrings).
var deniedSyscalls = []string{
	"acct", "add_key", "bpf", "clock_settime", "clock_settime64", "clone3",
	"delete_module", "fanotify_init", "finit_module", "fsconfig", "fsmount", "fsopen",
	"fspick", "get_mempolicy", "init_module", "io_uring_enter", "io_uring_register",
	"io_uring_setup", "ioperm", "iopl", "kcmp", "kexec_file_load", "kexec_load",
	"keyctl", "lookup_dcookie", "mbind", "mount", "mount_setattr", "move_mount",
	"name_to_handle_at", "nfsservctl", "open_by_handle_at", "open_tree",
	"perf_event_open", "pidfd_getfd", "pivot_root", "process_madvise",
	"process_vm_readv", "process_vm_writev", "quotactl", "quotactl_fd", "reboot",
	"request_key", "set_mempolicy", "setdomainname", "sethostname", "setns",
	"settimeofday", "stime", "swapoff", "swapon", "syslog", "umount", "umount2",
	"unshare", "userfaultfd", "uselib", "ustat", "vhangup", "vm86", "vm86old",
}

// Constants for the argument filters.
const (
	afVsock = 40 // AF_VSOCK
	// namespaceFlags are CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET.
	namespaceFlags = 0x7E020000
	enosys         = 38
	eperm          = 1
	agentPid       = 1 // the agent is PID 1 in its pid namespace
)

func defaultSeccomp() *specs.LinuxSeccomp {
	errEPERM, errENOSYS := uint(eperm), uint(enosys)
	allow := append(append([]string(nil), allowedSyscalls...), archSyscalls[goruntime.GOARCH]...)
	syscalls := []specs.LinuxSyscall{
		{Names: allow, Action: specs.ActAllow},
		{Names: []string{"socket"}, Action: specs.ActAllow,
			Args: []specs.LinuxSeccompArg{{Index: 0, Value: afVsock, Op: specs.OpNotEqual}}},
		{Names: []string{"clone"}, Action: specs.ActAllow,
			Args: []specs.LinuxSeccompArg{{Index: 0, Value: namespaceFlags, ValueTwo: 0, Op: specs.OpMaskedEqual}}},
		{Names: []string{"clone3"}, Action: specs.ActErrno, ErrnoRet: &errENOSYS},
		{Names: []string{"ptrace"}, Action: specs.ActAllow,
			Args: []specs.LinuxSeccompArg{{Index: 1, Value: agentPid, Op: specs.OpNotEqual}}},
	}
	// personality: only the harmless personas Docker allows (Linux, 32-bit
	// Linux, UNAME26, both, and the query value).
	for _, p := range []uint64{0x0, 0x8, 0x20000, 0x20008, 0xffffffff} {
		syscalls = append(syscalls, specs.LinuxSyscall{Names: []string{"personality"}, Action: specs.ActAllow,
			Args: []specs.LinuxSeccompArg{{Index: 0, Value: p, Op: specs.OpEqualTo}}})
	}
	return &specs.LinuxSeccomp{
		DefaultAction:   specs.ActErrno,
		DefaultErrnoRet: &errEPERM,
		Architectures:   seccompArches(),
		Syscalls:        syscalls,
	}
}

func seccompArches() []specs.Arch {
	switch goruntime.GOARCH {
	case "amd64":
		return []specs.Arch{specs.ArchX86_64, specs.ArchX86, specs.ArchX32}
	case "arm64":
		return []specs.Arch{specs.ArchAARCH64, specs.ArchARM}
	}
	return nil
}
