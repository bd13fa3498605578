// Package runscshim is `runsc-shim`, the small command the daemon runs
// runsc's network set-up through (see Run). It is its own package so that
// the agent binary, which serves it too, links nothing of the daemon's.
package runscshim

import (
	"fmt"
	"os"
	goruntime "runtime"

	"golang.org/x/sys/unix"
)

// Debian 12's runsc (20221219) refuses to take over a network namespace
// that it believes is the host's: it checks whether
// /proc/sys/net/core/rmem_default exists, which was true only in the
// host's namespace on the kernels of its time. Newer kernels have that
// sysctl in every namespace, so `runsc run --network=sandbox` and
// `runsc restore` fail with "cannot run with network enabled in root
// network namespace" although the namespace is the sandbox's own.
//
// Run works around it: started as `sbx runsc-shim RUNSC ARGS…` (or
// `sbx-agent runsc-shim …`), it gives itself a private mount namespace with
// an empty, read-only /proc/sys/net and execs runsc there. Only the runsc
// command and the processes it starts see that; the namespace check then
// finds no such file, and gVisor's own network stack needs nothing under
// /proc/sys/net. The daemon uses it for commands that wire a sandbox's
// network only.

// Command is the hidden subcommand (of sbx and of sbx-agent) that runs Run.
const Command = "runsc-shim"

// Run runs args (a runsc command line) as described above. It returns only
// on failure.
func Run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: sbx %s RUNSC [ARG...]", Command)
	}
	// The mount namespace belongs to this thread; exec keeps it.
	goruntime.LockOSThread()
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("unshare mount namespace: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	if err := unix.Mount("sbx-shim", "/proc/sys/net", "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0555"); err != nil {
		return fmt.Errorf("hide /proc/sys/net: %w", err)
	}
	return unix.Exec(args[0], args, os.Environ())
}
