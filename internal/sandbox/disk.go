package sandbox

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
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/sdk"
)

// A sandbox created with diskMiB keeps its writes (the overlay's upper and
// work dirs) on a filesystem of its own: an ext4 image, sandboxes/<id>/disk.img,
// attached to a loop device and mounted at sandboxes/<id>/disk while an
// instance runs. Writes beyond the size fail with ENOSPC inside the sandbox
// (NO_SPACE from the file API), and the host's disk and other sandboxes are
// untouched.
//
// Why ext4 on a loop device: the files must survive stop, start and daemon
// restarts, which a tmpfs would not, and must not hold RAM; the host's data dir
// is plain ext4 without project quotas, so an xfs or ext4 project quota is not
// available everywhere. The image file is sparse: it takes host space only as
// the sandbox writes.

const (
	minDiskMiB = 16
	maxDiskMiB = 1 << 20 // 1 TiB
)

// diskDirs returns the upper and work dirs of sb, mounting its disk first if
// it has one.
func (m *Manager) diskDirs(sb *store.Sandbox) (upper, work string, err error) {
	d := m.dirsOf(sb.ID)
	if sb.Spec.DiskMiB == 0 {
		return d.upper, d.work, nil
	}
	mnt, img := filepath.Join(d.root, "disk"), filepath.Join(d.root, "disk.img")
	// A mount left by a crash would hide the fresh one.
	if err := m.cfg.Rootfs.Unmount(mnt); err != nil {
		return "", "", errdefs.Internal(err, "clear old disk mount of %s", sb.ID)
	}
	if _, err := os.Stat(img); errors.Is(err, os.ErrNotExist) {
		if err := makeDisk(img, sb.Spec.DiskMiB); err != nil {
			return "", "", err
		}
	}
	if err := os.MkdirAll(mnt, 0o700); err != nil {
		return "", "", errdefs.Internal(err, "create disk mount point of %s", sb.ID)
	}
	// Two mounts of one ext4 image would corrupt it. A previous instance's
	// mount that had to be detached lazily lives until its last user goes;
	// its loop device goes with it.
	if err := waitDetached(img); err != nil {
		return "", "", errdefs.Unavailable(sdk.CodeDiskBusy, "the disk of sandbox %s is still in use by its previous instance; try again shortly", sb.ID)
	}
	if err := mountLoop(img, mnt); err != nil {
		return "", "", errdefs.Internal(err, "mount the disk of %s", sb.ID)
	}
	return filepath.Join(mnt, "upper"), filepath.Join(mnt, "work"), nil
}

// unmountDisk unmounts the sandbox's disk, if mounted. The loop device goes
// with it (autoclear). Right after an instance exits the kernel may still be
// tearing down its mount namespace, which keeps the disk busy for a moment:
// wait for that before settling for a lazy detach. The kernel releases an
// autoclear loop device a moment after its last user goes: wait for that too
// (bounded), so a stopped sandbox holds no loop device.
func (m *Manager) unmountDisk(id string) error {
	root := m.dirsOf(id).root
	mnt := filepath.Join(root, "disk")
	deadline := time.Now().Add(5 * time.Second)
	for errors.Is(unix.Unmount(mnt, 0), unix.EBUSY) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := m.cfg.Rootfs.Unmount(mnt); err != nil {
		return err
	}
	if err := waitDetached(filepath.Join(root, "disk.img")); err != nil {
		m.log.Warn("disk still attached after unmount; it detaches when its last user goes", "id", id, "err", err)
	}
	return nil
}

// waitDetached waits until no loop device is backed by img.
func waitDetached(img string) error {
	abs, err := filepath.Abs(img)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for loopBacked(abs) {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s is still attached to a loop device", abs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// loopBacked reports whether a loop device is attached to the file at path.
func loopBacked(path string) bool {
	files, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && strings.TrimSpace(string(b)) == path {
			return true
		}
	}
	return false
}

// makeDisk writes a sparse ext4 image of sizeMiB at path. It is formatted
// under a temporary name, so a crash never leaves a half-made image in place.
func makeDisk(path string, sizeMiB int) error {
	mkfs, err := exec.LookPath("mkfs.ext4")
	if err != nil {
		return errdefs.Unavailable(sdk.CodeDiskUnsupported, "diskMiB needs mkfs.ext4 on the host (Debian: e2fsprogs)")
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
	out, err := exec.Command(mkfs, "-q", "-F", "-m", "0", "-E", "lazy_itable_init=1,lazy_journal_init=1,nodiscard", tmp).CombinedOutput()
	if err != nil {
		os.Remove(tmp)
		return errdefs.Internal(fmt.Errorf("%v: %s", err, out), "format disk image")
	}
	if err := os.Rename(tmp, path); err != nil {
		return errdefs.Internal(err, "install disk image")
	}
	return nil
}

// mountLoop attaches img to a free loop device and mounts it at target.
func mountLoop(img, target string) error {
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
