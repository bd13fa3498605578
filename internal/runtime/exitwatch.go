package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// WatchExit returns a channel that is closed when the process pid exits. The
// process need not be our child: the daemon re-attaches to instances started
// by an earlier run of itself. A pid that is already gone gives a closed
// channel. When ctx ends first the watch stops (its pidfd closed, its
// goroutine gone) and the channel is never closed.
//
// It holds a pidfd, so a pid reused after the exit is not mistaken for the
// process; the caller must make sure pid still names the process it means
// when it calls WatchExit. The wait uses Go's network poller, not a blocked
// OS thread per process.
func WatchExit(ctx context.Context, pid int) (<-chan struct{}, error) {
	return WatchExitFunc(ctx, pid, nil)
}

// WatchExitFunc is WatchExit that also calls then, when not nil, from the
// watch's own goroutine once the watch ends: with exited true after the
// channel is closed, false when ctx ended first. A caller that must act on
// the exit needs no goroutine of its own waiting on the channel (one per
// sandbox: docs/performance.md). then is not called when WatchExitFunc
// fails.
func WatchExitFunc(ctx context.Context, pid int, then func(exited bool)) (<-chan struct{}, error) {
	if pid <= 0 {
		return nil, errdefs.Invalid(wire.CodeInvalidPID, "pid %d is not a process id", pid)
	}
	if then == nil {
		then = func(bool) {}
	}
	done := make(chan struct{})
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if errors.Is(err, unix.ESRCH) {
		close(done)
		go then(true)
		return done, nil
	}
	if err != nil {
		return nil, errdefs.Internal(err, "pidfd_open %d", pid)
	}
	// The child subreaper must not take this pidfd for os/exec's
	// (subreaper.go): it is listed right after it is opened and unlisted
	// right before it is closed.
	ownPidfds.Store(fd, struct{}{})
	// A nonblocking fd handed to os.NewFile is registered with the poller.
	f := os.NewFile(uintptr(fd), fmt.Sprintf("pidfd:%d", pid))
	closeFd := func() {
		ownPidfds.Delete(fd)
		f.Close()
	}
	rc, err := f.SyscallConn()
	if err != nil {
		closeFd()
		return nil, errdefs.Internal(err, "pidfd %d", pid)
	}
	go func() {
		// The end of ctx wakes the parked read below with a deadline.
		stop := context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Now()) })
		// A pidfd becomes readable when the process exits. Returning false
		// parks this goroutine until the poller sees it readable.
		err := rc.Read(func(fd uintptr) bool {
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, err := unix.Poll(fds, 0)
			if err == unix.EINTR {
				return false
			}
			return err != nil || n > 0
		})
		stop()
		exited := !errors.Is(err, os.ErrDeadlineExceeded)
		if exited {
			close(done)
		}
		closeFd()
		then(exited)
	}()
	return done, nil
}
