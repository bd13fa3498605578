package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/loopdisk"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
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
// operator's default (sbx serve --default-disk-mib), or less: the data
// disk's free space above its reserve that no other sandbox's disk may still
// grow into (the images are sparse), and at least minDiskMiB. So sandboxes
// with the default disk cannot together write the data disk full, which
// would turn every loop-mounted disk read-only at its next write.
func (m *Manager) defaultDiskMiB(ctx context.Context) int {
	n := m.cfg.Defaults.DiskMiB
	if n == 0 || m.cfg.Disk == nil {
		return n
	}
	spare, err := m.cfg.Disk.Spare()
	if err != nil {
		return n
	}
	promised, err := m.promisedDisk(ctx)
	if err != nil {
		m.log.Warn("cannot sum the sandboxes' disks; the default disk may overcommit the data disk", "err", err)
	}
	if free := (int64(spare) - promised) >> 20; free < int64(n) {
		n = max(int(free), minDiskMiB)
	}
	return n
}

// promisedDisk is what the sandboxes' disk images may still grow by: each
// one's size less the blocks it already holds (all of it for one not made
// yet, or archived).
func (m *Manager) promisedDisk(ctx context.Context) (int64, error) {
	all, err := m.cfg.Store.ListSandboxes(ctx, store.Filter{})
	if err != nil {
		return 0, err
	}
	var sum int64
	for _, sb := range all {
		if sb.Spec.DiskMiB == 0 {
			continue
		}
		left := int64(sb.Spec.DiskMiB) << 20
		var st unix.Stat_t
		if unix.Stat(filepath.Join(m.dirsOf(sb.ID).root, "disk.img"), &st) == nil {
			left -= st.Blocks * 512
		}
		sum += max(left, 0)
	}
	return sum, nil
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
	// Also the sandbox's directory: a fork's disk is made before anything
	// else of it.
	if err := os.MkdirAll(mnt, 0o700); err != nil {
		return "", "", errdefs.Internal(err, "create disk mount point of %s", sb.ID)
	}
	made := false
	if _, err := os.Stat(img); errors.Is(err, os.ErrNotExist) {
		if err := m.makeDisk(img, sb.Spec.DiskMiB); err != nil {
			return "", "", err
		}
		made = true
	}
	// Two mounts of one ext4 image would corrupt it. A previous instance's
	// mount that had to be detached lazily lives until its last user goes;
	// its loop device goes with it. An image made just now has had no
	// instance, and the check reads every loop device of the host.
	if !made {
		if err := loopdisk.WaitDetached(img); err != nil {
			return "", "", errdefs.Unavailable(wire.CodeDiskBusy, "the disk of sandbox %s is still in use by its previous instance; try again shortly", sb.ID)
		}
	}
	if err := loopdisk.Mount(img, mnt); err != nil {
		return "", "", errdefs.Internal(err, "mount the disk of %s", sb.ID)
	}
	return filepath.Join(mnt, "upper"), filepath.Join(mnt, "work"), nil
}

// makeDisk makes the disk image of a new sandbox from a template of its
// size (loopdisk keeps a few sizes: the operator's default, and the floor
// that defaultDiskMiB gives when the data disk is short, are most creates').
func (m *Manager) makeDisk(img string, sizeMiB int) error {
	return loopdisk.MakeFromTemplate(img, sizeMiB, filepath.Join(m.cfg.DataDir, "disk-templates"))
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
