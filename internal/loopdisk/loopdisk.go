// Package loopdisk makes sparse ext4 images and mounts them through loop
// devices: the filesystem of a sandbox's own disk (diskMiB) and of volumes,
// whose size limit holds because the filesystem is no bigger.
package loopdisk

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// WaitDetached waits until no loop device is backed by img.
func WaitDetached(img string) error {
	abs, err := filepath.Abs(img)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for Backed(abs) {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s is still attached to a loop device", abs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// Backed reports whether a loop device is attached to the file at path.
func Backed(path string) bool {
	files, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && strings.TrimSpace(string(b)) == path {
			return true
		}
	}
	return false
}

// Make writes a sparse ext4 image of sizeMiB at path. It is formatted
// under a temporary name, so a crash never leaves a half-made image in place.
func Make(path string, sizeMiB int) error {
	return format(path, sizeMiB, "")
}

// format is Make with an ext4 feature to add (mkfs -O), if not "".
func format(path string, sizeMiB int, feature string) error {
	mkfs, err := exec.LookPath("mkfs.ext4")
	if err != nil {
		return errdefs.Unavailable(wire.CodeDiskUnsupported, "diskMiB needs mkfs.ext4 on the host (Debian: e2fsprogs)")
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return errdefs.Internal(err, "create disk image")
	}
	err = f.Truncate(int64(sizeMiB) << 20)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return errdefs.Internal(err, "size disk image")
	}
	// -m 0: no blocks reserved for root, everything is the sandbox's.
	// Lazy init keeps formatting fast; the kernel finishes it in the background.
	args := []string{"-q", "-F", "-m", "0", "-E", "lazy_itable_init=1,lazy_journal_init=1,nodiscard"}
	if feature != "" {
		args = append(args, "-O", feature)
	}
	out, err := exec.Command(mkfs, append(args, tmp)...).CombinedOutput()
	if err != nil {
		os.Remove(tmp)
		return errdefs.Internal(fmt.Errorf("%v: %s", err, out), "format disk image")
	}
	if err := os.Rename(tmp, path); err != nil {
		return errdefs.Internal(err, "install disk image")
	}
	return nil
}

// Mount attaches img to a free loop device and mounts it at target.
func Mount(img, target string) error {
	file, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer file.Close()
	ctl, err := os.OpenFile("/dev/loop-control", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("open loop control: %w", err)
	}
	defer ctl.Close()
	// Another process (a concurrent start, losetup) may take the free device
	// between asking and configuring it: then ask again.
	for attempt := 0; ; attempt++ {
		n, err := unix.IoctlRetInt(int(ctl.Fd()), unix.LOOP_CTL_GET_FREE)
		if err != nil {
			return fmt.Errorf("find a free loop device: %w", err)
		}
		dev := "/dev/loop" + strconv.Itoa(n)
		loop, err := openLoop(dev)
		if err != nil {
			return err
		}
		cfg := unix.LoopConfig{Fd: uint32(file.Fd())}
		cfg.Info.Flags = unix.LO_FLAGS_AUTOCLEAR // detach when unmounted
		err = unix.IoctlLoopConfigure(int(loop.Fd()), &cfg)
		if errors.Is(err, unix.EBUSY) && attempt < 100 {
			loop.Close()
			continue
		}
		if err != nil {
			loop.Close()
			return fmt.Errorf("attach %s to %s: %w", img, dev, err)
		}
		err = unix.Mount(dev, target, "ext4", unix.MS_NOSUID|unix.MS_NODEV, "")
		// Closing our handle leaves the mount as the last user: autoclear
		// detaches the device on unmount, or now if the mount failed.
		loop.Close()
		if err != nil {
			return fmt.Errorf("mount %s at %s: %w", dev, target, err)
		}
		return nil
	}
}

// openLoop opens a loop device the kernel has just made; devtmpfs may show its
// node a moment later.
func openLoop(dev string) (*os.File, error) {
	deadline := time.Now().Add(2 * time.Second)
	for {
		f, err := os.OpenFile(dev, os.O_RDWR, 0)
		if err == nil || !errors.Is(err, os.ErrNotExist) || time.Now().After(deadline) {
			return f, err
		}
		time.Sleep(10 * time.Millisecond)
	}
}
