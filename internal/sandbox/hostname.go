package sandbox

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// setHostname sets the hostname of the UTS namespace of the process pid
// (a class-container instance's agent) from the host, so that an adopted
// pool instance answers to its sandbox's name without a restart.
//
// The calling thread joins that namespace, so it runs on a goroutine of
// its own that ends without unlocking its thread: Go then discards the
// thread instead of reusing it in the wrong namespace.
func setHostname(pid int, name string) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked, see above
		fd, err := unix.Open(fmt.Sprintf("/proc/%d/ns/uts", pid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- err
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWUTS); err != nil {
			errc <- fmt.Errorf("join UTS namespace of %d: %w", pid, err)
			return
		}
		errc <- unix.Sethostname([]byte(name))
	}()
	return <-errc
}
