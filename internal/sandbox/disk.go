package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/loopdisk"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/sdk"
)

// A sandbox created with diskMiB (or given the operator's default,
// defaultDiskMiB) keeps its writes (the overlay's upper and
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

// defaultDiskMiB is the disk of a sandbox whose create names none: the
// operator's default (sbx serve --default-disk-mib), or the data disk's free
// space above its reserve when that is less, so that one sandbox alone
// cannot write the disk full. The images are sparse: many sandboxes may
// together be promised more than the disk has.
func (m *Manager) defaultDiskMiB() int {
	n := m.cfg.Defaults.DiskMiB
	if n == 0 || m.cfg.Disk == nil {
		return n
	}
	if spare, err := m.cfg.Disk.Spare(); err == nil && spare>>20 < uint64(n) {
		n = max(int(spare>>20), minDiskMiB)
	}
	return n
}

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
		if err := loopdisk.Make(img, sb.Spec.DiskMiB); err != nil {
			return "", "", err
		}
	}
	if err := os.MkdirAll(mnt, 0o700); err != nil {
		return "", "", errdefs.Internal(err, "create disk mount point of %s", sb.ID)
	}
	// Two mounts of one ext4 image would corrupt it. A previous instance's
	// mount that had to be detached lazily lives until its last user goes;
	// its loop device goes with it.
	if err := loopdisk.WaitDetached(img); err != nil {
		return "", "", errdefs.Unavailable(sdk.CodeDiskBusy, "the disk of sandbox %s is still in use by its previous instance; try again shortly", sb.ID)
	}
	if err := loopdisk.Mount(img, mnt); err != nil {
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
	if err := loopdisk.WaitDetached(filepath.Join(root, "disk.img")); err != nil {
		m.log.Warn("disk still attached after unmount; it detaches when its last user goes", "id", id, "err", err)
	}
	return nil
}
