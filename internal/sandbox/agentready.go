package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/agentapi"
)

// waitForSocket waits, up to max, until the agent's socket file exists in
// runDir, so that the readiness poll that follows (agentapi WaitReady)
// mostly succeeds on its first call. The readiness poll dials the socket
// every 2 ms (an openat, a socket, a connect, an HTTP round trip and a
// goroutine wake-up each); with several instances starting at once on a
// busy host, where an agent takes a second to come up, those polls were
// most of the daemon's CPU in startInstance. An inotify watch on the run
// directory wakes this wait once, when the socket appears. Any failure of
// the watch, or no socket within max, is left to WaitReady.
func waitForSocket(ctx context.Context, runDir string, max time.Duration) {
	sock := filepath.Join(runDir, agentapi.AgentSock)
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "inotify") // non-blocking: reads honour deadlines
	defer f.Close()
	if _, err := unix.InotifyAddWatch(fd, runDir, unix.IN_CREATE|unix.IN_MOVED_TO); err != nil {
		return
	}
	deadline := time.Now().Add(max)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	f.SetReadDeadline(deadline)
	buf := make([]byte, 4096)
	for {
		// After the watch is in place: a socket made before it is seen here.
		if _, err := os.Lstat(sock); err == nil {
			return
		}
		if _, err := f.Read(buf); err != nil {
			return // the deadline, or a broken watch
		}
	}
}
