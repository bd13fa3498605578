package agent

import (
	"errors"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// The agent is PID 1 (or, in tests, a child subreaper), so every orphan in the
// instance becomes its child and must be reaped. A reaper that calls
// wait4(-1) steals exit statuses from anyone else who waits, so os/exec's
// Wait cannot be used anywhere in this process: children are started with
// startChild and their statuses are handed out by the reaper instead.

// child is a process started by startChild.
type child struct {
	pid  int
	done <-chan syscall.WaitStatus // receives the exit status once
}

type reaper struct {
	once    sync.Once
	mu      sync.Mutex
	waiters map[int]chan syscall.WaitStatus
}

var reap = &reaper{waiters: make(map[int]chan syscall.WaitStatus)}

// startReaper installs the process-wide SIGCHLD reaper once. When the agent
// is not PID 1 it also becomes a child subreaper, so orphaned grandchildren
// are reparented to it rather than to the host's init.
func startReaper() {
	reap.once.Do(func() {
		if os.Getpid() != 1 {
			if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
				logf("set child subreaper: %v", err)
			}
		}
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGCHLD)
		go func() {
			for {
				reap.reapAll()
				<-ch
			}
		}()
	})
}

// reapAll collects every exited child. SIGCHLDs coalesce, so one signal may
// stand for many exits: loop until nothing more is waiting.
func (r *reaper) reapAll() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG|syscall.WALL, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			return // ECHILD: no children; 0: none exited yet
		}
		r.dispatch(pid, ws)
	}
}

// dispatch hands ws to whoever registered pid. An unregistered pid is an
// orphan that was reparented to us; its status concerns no one. The status of
// our own child cannot arrive unregistered, because startChild holds r.mu
// from before the fork until the pid is registered, and dispatch needs r.mu.
// (Parking unclaimed statuses would be wrong: a later child that reuses the
// pid would be handed the orphan's status.)
func (r *reaper) dispatch(pid int, ws syscall.WaitStatus) {
	r.mu.Lock()
	ch, ok := r.waiters[pid]
	delete(r.waiters, pid)
	r.mu.Unlock()
	if ok {
		ch <- ws // buffered; never blocks
	}
}

// startChild forks and execs argv0 and registers the child with the reaper.
func startChild(argv0 string, argv []string, attr *syscall.ProcAttr) (*child, error) {
	startReaper()
	reap.mu.Lock()
	defer reap.mu.Unlock()
	pid, err := syscall.ForkExec(argv0, argv, attr)
	if err != nil {
		return nil, err
	}
	ch := make(chan syscall.WaitStatus, 1)
	reap.waiters[pid] = ch
	return &child{pid: pid, done: ch}, nil
}
