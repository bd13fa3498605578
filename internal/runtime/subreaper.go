package runtime

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// runsc's detached processes (the sandbox, the gofer) are orphaned as soon
// as `runsc run` or `runsc restore` exits, and `runsc delete` kills them and
// then polls until they are gone, which a zombie is not. Reparented to the
// host's init, a zombie lingers until init gets round to reaping it (1.3 to
// 1.9 s per delete on hosts whose PID 1 is slow to reap). StartSubreaper
// makes the daemon their reaper instead.
//
// A child subreaper must not reap children that os/exec started: their
// Wait would fail with ECHILD. What tells them apart: since Go 1.23,
// os.StartProcess creates each child with CLONE_PIDFD, so a pidfd for it is
// open in this process from its creation until os/exec has reaped it. A
// reparented orphan never had one. So a sweep
//
//  1. opens a pidfd of its own on each zombie child (which pins the
//     process: no pid reuse can swap it for another) and checks through it
//     that it is still an unreaped exited child;
//  2. then lists the pids of every other pidfd open in this process
//     (/proc/self/fdinfo), leaving out the ones this package opened to
//     watch exits (WatchExit) and the sweep's own;
//  3. reaps, through its own pidfd, only the zombies no other pidfd names.
//
// An os/exec child is either still unreaped at step 2, so its pidfd is
// listed and it is left alone, or os/exec reaped it after step 1, so the
// waitid of step 3 finds nothing (ECHILD) and takes nothing. A pidfd the
// sweep cannot account for (os.FindProcess, a WatchExit being opened) only
// delays a reap: skipped zombies are swept again shortly.

// One more consequence of adopting orphans: an adopted process becomes the
// child of one of the daemon's threads, and when that thread exits (Go ends
// a thread whose goroutine ends locked to it, as network namespace set-up
// does), the kernel moves the child to another thread and sends it its
// parent-death signal, if it has one. runsc's detached sandbox and gofer
// (`runsc run --detach`, no --attached) and runc's container init have
// none; a program that sets one and then orphans itself under the daemon
// would be killed at such a moment.

// ownPidfds are the pidfds this package holds for other reasons than
// os/exec (WatchExit, the sweep itself). An fd is added right after it is
// opened and removed right before it is closed, so a listed fd number is
// never one os/exec has reused.
var ownPidfds sync.Map // int → struct{}

// retryReap is how soon a sweep runs again after it left a zombie alone.
const retryReap = 20 * time.Millisecond

// StartSubreaper makes this process a child subreaper and reaps the
// orphans that get reparented to it (see above) for as long as the process
// lives. It refuses, with an error saying why, where that would not be
// safe: when os/exec does not hold pidfds (a kernel before 5.4, or pidfds
// blocked by seccomp). Orphans then go to the host's init as before.
func StartSubreaper(log *slog.Logger) error {
	if err := osExecHoldsPidfds(); err != nil {
		return fmt.Errorf("not becoming a child subreaper: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("become a child subreaper: %w", err)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGCHLD)
	go func() {
		for {
			pending, err := sweepOrphans()
			if err != nil {
				log.Warn("reap orphaned processes", "err", err)
			}
			if pending {
				select {
				case <-sigs:
				case <-time.After(retryReap):
				}
				continue
			}
			<-sigs
		}
	}()
	return nil
}

// osExecHoldsPidfds checks that a child started by os/exec has a pidfd in
// this process while it runs, which the sweep relies on.
func osExecHoldsPidfds() error {
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start a test child: %w", err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	held, err := heldPidfds()
	if err != nil {
		return err
	}
	if !held[cmd.Process.Pid] {
		return errors.New("os/exec holds no pidfd for its children here")
	}
	return nil
}

// sweepOrphans reaps every zombie child that os/exec did not start. pending
// says whether it left zombies for a later sweep.
func sweepOrphans() (pending bool, err error) {
	// Most SIGCHLDs are os/exec's children, reaped by the time this runs:
	// with no zombie child at all, skip listing the children (every
	// thread's file, and a wait on each: a container's init among them).
	if !anyZombie() {
		return false, nil
	}
	kids, err := childPids()
	if err != nil {
		return false, err
	}
	type zombie struct{ pid, fd int }
	var zombies []zombie
	defer func() {
		for _, z := range zombies {
			ownPidfds.Delete(z.fd)
			unix.Close(z.fd)
		}
	}()
	for _, pid := range kids {
		if !isZombie(pid) {
			continue
		}
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue // reaped meanwhile (ESRCH)
		}
		ownPidfds.Store(fd, struct{}{})
		zombies = append(zombies, zombie{pid, fd})
		if !exitedChild(fd, unix.WNOWAIT) {
			// Reaped and the pid reused since isZombie: not ours to touch.
			zombies[len(zombies)-1].pid = 0
		}
	}
	if len(zombies) == 0 {
		return false, nil
	}
	held, err := heldPidfds()
	if err != nil {
		return true, err
	}
	for _, z := range zombies {
		switch {
		case z.pid == 0:
		case held[z.pid]:
			pending = true // os/exec's (or unaccounted for): look again soon
		default:
			exitedChild(z.fd, 0)
		}
	}
	return pending, nil
}

// anyZombie reports whether any child of this process (of any of its
// threads) has exited and awaits its reaper, without reaping it.
func anyZombie() bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return err == nil && info.Signo == int32(unix.SIGCHLD)
}

// exitedChild waits (without blocking) through pidfd fd and reports whether
// it names an exited child of this process; with flags WNOWAIT it leaves
// the child unreaped, with 0 it reaps it.
func exitedChild(fd, flags int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PIDFD, fd, &info, unix.WEXITED|unix.WNOHANG|flags, nil)
	return err == nil && info.Signo == int32(unix.SIGCHLD)
}

// childPids lists this process's children, zombies included, from every
// thread's /proc children file (a reparented orphan becomes the child of
// one of the threads).
func childPids() ([]int, error) {
	tasks, err := filepath.Glob("/proc/self/task/*/children")
	if err != nil || len(tasks) == 0 {
		return nil, fmt.Errorf("list children: no /proc/self/task/*/children (CONFIG_PROC_CHILDREN)")
	}
	var pids []int
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread ended
		}
		for _, field := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(field); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids, nil
}

// isZombie reports whether child pid has exited and awaits its reaper. It
// asks the kernel without reaping (WNOWAIT): one system call, where reading
// /proc/<pid>/stat costs three and a page of text, for every child (each
// container's init among them) at every SIGCHLD.
func isZombie(pid int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return err == nil && info.Signo == int32(unix.SIGCHLD)
}

// heldPidfds returns the pids of the pidfds open in this process, but for
// the package's own (ownPidfds).
func heldPidfds() (map[int]bool, error) {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil, err
	}
	held := make(map[int]bool)
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, own := ownPidfds.Load(fd); own {
			continue
		}
		link, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil || link != "anon_inode:[pidfd]" {
			continue
		}
		if pid := pidfdPid(fd); pid > 0 {
			held[pid] = true
		}
	}
	return held, nil
}

// pidfdPid reads the pid a pidfd names from its fdinfo ("Pid:\t123"); -1
// for a process already reaped.
func pidfdPid(fd int) int {
	f, err := os.Open("/proc/self/fdinfo/" + strconv.Itoa(fd))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Pid:"); ok {
			pid, _ := strconv.Atoi(strings.TrimSpace(v))
			return pid
		}
	}
	return 0
}
