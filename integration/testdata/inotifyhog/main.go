// Command inotifyhog takes inotify instances until the kernel refuses one,
// writes "N ERRNO" (how many it took, and why it stopped) to the file named
// by its argument, and holds them until killed. The user-namespace test runs
// it inside a sandbox to exhaust its owner's fs.inotify.max_user_instances.
package main

import (
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	n := 0
	var err error
	for {
		if _, err = unix.InotifyInit1(unix.IN_CLOEXEC); err != nil {
			break
		}
		n++
	}
	name := "error"
	if errno, ok := err.(syscall.Errno); ok {
		name = unix.ErrnoName(errno)
	}
	if err := os.WriteFile(os.Args[1], []byte(fmt.Sprintf("%d %s", n, name)), 0o644); err != nil {
		os.Exit(1)
	}
	for { // select{} would be a deadlock the runtime ends, freeing them
		time.Sleep(time.Hour)
	}
}
