package runtime

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestRunDirIsCapped(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	dir := filepath.Join(t.TempDir(), "run")
	if err := mountRunDir(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { UnmountRunDir(dir) })
	if err := os.WriteFile(filepath.Join(dir, "keep"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := mountRunDir(dir); err != nil { // a second start keeps what is there
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "keep")); err != nil {
		t.Errorf("a second mountRunDir hid the files: %v", err)
	}
	err := os.WriteFile(filepath.Join(dir, "fill"), make([]byte, (RunDirMiB+1)<<20), 0o600)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("writing past the cap: %v, want ENOSPC", err)
	}
	if err := UnmountRunDir(dir); err != nil {
		t.Fatal(err)
	}
	if mounted, err := isMountPoint(dir); err != nil || mounted {
		t.Errorf("after UnmountRunDir: mounted %v, %v", mounted, err)
	}
	if err := UnmountRunDir(dir); err != nil {
		t.Errorf("a second UnmountRunDir: %v", err)
	}
}
