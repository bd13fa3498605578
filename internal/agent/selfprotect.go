package agent

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// protectSelf makes the agent untraceable by the code it runs (issue 13.1).
// Everything in a class-container instance runs as the same root without
// CAP_SYS_PTRACE, so by default any process could PTRACE_ATTACH to PID 1,
// stop it, or read its memory through /proc/1/mem. A non-dumpable process
// can only be traced or read by someone holding CAP_SYS_PTRACE over its user
// namespace: the host, never the sandbox.
//
// The flag is reset by execve, so the processes the agent starts are
// ordinary (dumpable, traceable by their peers, readable through /proc).
// The runtime's seccomp filter refuses ptrace of pid 1 too (defence in depth).
func protectSelf() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("make the agent non-dumpable: %w", err)
	}
	return nil
}
