//go:build unix

package dirtar

import (
	"io/fs"
	"syscall"
)

// readFlags open a file for Write: whatever replaced it since it was seen,
// opening neither blocks (a fifo) nor follows a link.
const readFlags = syscall.O_NONBLOCK | syscall.O_NOFOLLOW

// sameDevice reports whether two entries are on one filesystem.
func sameDevice(a, b fs.FileInfo) bool {
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return !ok1 || !ok2 || sa.Dev == sb.Dev
}
