package runtime

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/errdefs"
)

// RunDirMiB is the size of the tmpfs behind every instance's run directory
// (issue 13.2). The directory is writable from inside and lives on the host,
// so without a cap code inside could fill the host's data disk through it. It
// holds the agent socket, the main process's log (two files of at most 8 MiB,
// see agentapi.MainLogFile) and its write times (two of at most 256 KiB,
// internal/agent/mainproc.go), the agent's own log (two of at most 1 MiB) and
// the exit marker, with room to spare. A tenant that fills it only loses its own
// logs.
const RunDirMiB = 20

// prepareDirs creates the instance's bundle directory and its capped run
// directory.
func prepareDirs(inst *Instance) error {
	if err := os.MkdirAll(inst.BundleDir, 0o700); err != nil {
		return errdefs.Internal(err, "create %s", inst.BundleDir)
	}
	if err := mountRunDir(inst.RunDir); err != nil {
		return errdefs.Internal(err, "prepare run directory of %s", inst.ID)
	}
	// A gVisor instance restored from a checkpoint (a fork) reopens the
	// agent's log by its path in the new run directory.
	if err := createIfMissing(filepath.Join(inst.RunDir, AgentOutput)); err != nil {
		return errdefs.Internal(err, "create the agent's log of %s", inst.ID)
	}
	if inst.ResolvConf != "" {
		b, err := os.ReadFile(inst.ResolvConf)
		if err == nil {
			err = writeNew(resolvCopy(inst), b)
		}
		if err != nil {
			return errdefs.Internal(err, "copy resolv.conf of %s", inst.ID)
		}
	}
	return nil
}

// createIfMissing creates an empty file at path unless one is there. A
// link left by code inside is not followed, nor does a fifo block the open.
func createIfMissing(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0o600)
	if err != nil {
		return err
	}
	return f.Close()
}

// writeNew replaces path with a new file holding b. What a previous
// instance left at path (the run directory is writable inside), a link
// included, is removed, never followed.
func writeNew(path string, b []byte) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// resolvCopy is the copy of inst.ResolvConf in the run directory that is
// bind-mounted read-only at /etc/resolv.conf. A bind mount shows its source
// path in the instance's mountinfo; on the run directory's tmpfs that path
// is "/.resolv.conf", not a host path. Code inside may rewrite the copy
// (through /.sbx/run), which changes its own resolver only.
func resolvCopy(inst *Instance) string { return filepath.Join(inst.RunDir, ".resolv.conf") }

// mountRunDir makes dir (created if missing) a size-capped tmpfs, unless it
// already is a mount point. The tmpfs stays mounted when the instance stops,
// so the main process's log and exit marker outlive the instance, as the
// daemon needs; UnmountRunDir removes it when the sandbox is deleted. Nothing
// in it survives a host reboot.
func mountRunDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if mounted, err := isMountPoint(dir); err != nil || mounted {
		return err
	}
	opts := fmt.Sprintf("size=%dm,mode=0700", RunDirMiB)
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, opts); err != nil {
		return fmt.Errorf("mount tmpfs on run directory %s: %w", dir, err)
	}
	return nil
}

// UnmountRunDir unmounts the run directory's tmpfs (its files go with it)
// before the sandbox's directory is removed. A directory that is not a mount
// point, or does not exist, is no error.
func UnmountRunDir(dir string) error {
	mounted, err := isMountPoint(dir)
	if errors.Is(err, os.ErrNotExist) || (err == nil && !mounted) {
		return nil
	}
	if err != nil {
		return err
	}
	// Detach: a reader (a log follower) must not make the delete fail.
	if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("unmount run directory %s: %w", dir, err)
	}
	return nil
}

// isMountPoint reports whether dir is on another filesystem than its parent.
func isMountPoint(dir string) (bool, error) {
	var st, parent unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return false, &os.PathError{Op: "stat", Path: dir, Err: err}
	}
	if err := unix.Lstat(filepath.Dir(dir), &parent); err != nil {
		return false, &os.PathError{Op: "stat", Path: filepath.Dir(dir), Err: err}
	}
	return st.Dev != parent.Dev, nil
}
