package image

import (
	"testing"

	"golang.org/x/sys/unix"
)

// isMountRoot and fsType tell a mount point and its file system without
// the mount table.
func TestIsMountRoot(t *testing.T) {
	if !isMountRoot("/proc") || fsType("/proc") != unix.PROC_SUPER_MAGIC {
		t.Errorf("/proc: mount root %v, type %#x", isMountRoot("/proc"), fsType("/proc"))
	}
	dir := t.TempDir()
	if isMountRoot(dir) {
		t.Errorf("%s, a plain directory, is taken for a mount root", dir)
	}
	if isMountRoot(dir + "/missing") {
		t.Error("a missing path is taken for a mount root")
	}
}
