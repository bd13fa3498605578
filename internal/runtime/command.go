package runtime

import (
	"os/exec"
	goruntime "runtime"
	"syscall"
)

// runTool runs a runtime command (runc, runsc) that must not outlive the
// daemon: if the daemon dies while, say, `runc run` is still setting up a
// container, the command is killed at once instead of finishing after the
// next daemon has reconciled, which would leave an instance no record
// owns. What a killed command half-made is found and removed by that
// reconcile. The command runs in its own session, so a signal to the
// daemon's process group does not reach it (or the instance it starts).
//
// The kernel sends the parent-death signal when the thread that started
// the child exits, so the goroutine keeps its thread until the command is
// done: no other goroutine can make that thread exit meanwhile.
func runTool(cmd *exec.Cmd) error {
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	return cmd.Run()
}
