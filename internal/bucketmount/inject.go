package bucketmount

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Mounts into a running sandbox. The host mount (s3fs, made by Mount) is
// cloned as a detached tree (open_tree), and a thread of the daemon that
// has entered the sandbox's mount namespace attaches it at the path
// (move_mount). Nothing of the sandbox runs: no binary of its image is
// executed as host root, and no path of it is followed through a symlink
// (openat2 RESOLVE_NO_SYMLINKS), so a sandbox cannot steer the mount
// elsewhere. The host root holds CAP_SYS_ADMIN over every namespace.

// Inject attaches the mount at hostDir to path inside the mount namespace
// of process pid (a sandbox's init), making the missing directories of path
// there, owned by the sandbox's root. A path that cannot be a mount point
// there is an Invalid error (INVALID_BUCKET_MOUNT).
func Inject(pid int, hostDir, path string) error {
	tree, err := unix.OpenTree(unix.AT_FDCWD, hostDir, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return fmt.Errorf("clone mount %s: %w", hostDir, err)
	}
	defer unix.Close(tree)
	uid, gid := rootIDs(pid)
	return inMountNamespace(pid, func() error {
		// Directories made as the sandbox's root, which owns them then; host
		// root's ids may not even be representable on its filesystem
		// (EOVERFLOW). Per thread, and this thread ends with the call.
		if uid != 0 || gid != 0 {
			unix.Setfsgid(gid)
			unix.Setfsuid(uid)
		}
		dir, err := makeDirs(path)
		if err != nil {
			return err
		}
		defer unix.Close(dir)
		if err := unix.MoveMount(tree, "", dir, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
			return fmt.Errorf("attach the mount at %s: %w", path, err)
		}
		return nil
	})
}

// Eject unmounts what is mounted at path inside the mount namespace of
// process pid. Nothing mounted there is not an error.
func Eject(pid int, path string) error {
	return inMountNamespace(pid, func() error {
		err := unix.Unmount(path, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW)
		if err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("unmount %s in the sandbox: %w", path, err)
		}
		return nil
	})
}

// inMountNamespace runs fn on a thread of its own that has entered the
// mount namespace of pid (its root and working directory are that
// namespace's root then). The thread is never handed back to the Go
// scheduler: it ends with the goroutine, namespace and all.
func inMountNamespace(pid int, fn func() error) error {
	ns, err := os.Open("/proc/" + strconv.Itoa(pid) + "/ns/mnt")
	if err != nil {
		return fmt.Errorf("open the sandbox's mount namespace: %w", err)
	}
	defer ns.Close()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: see above
		// setns(CLONE_NEWNS) needs filesystem attributes (root, cwd) of the
		// thread's own, not shared with the rest of the process.
		if err := unix.Unshare(unix.CLONE_FS); err != nil {
			errc <- fmt.Errorf("unshare filesystem attributes: %w", err)
			return
		}
		if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNS); err != nil {
			errc <- fmt.Errorf("enter the sandbox's mount namespace: %w", err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// makeDirs makes the missing directories of the absolute path, following
// no symlink, and returns an O_PATH descriptor of it.
func makeDirs(path string) (int, error) {
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	for _, name := range strings.Split(strings.Trim(path, "/"), "/") {
		if err := unix.Mkdirat(fd, name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			unix.Close(fd)
			return -1, errdefs.Invalid(wire.CodeInvalidBucketMount, "cannot make directory %s in the sandbox: %v", path, err)
		}
		next, err := unix.Openat2(fd, name, &unix.OpenHow{
			Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		unix.Close(fd)
		if err != nil {
			return -1, errdefs.Invalid(wire.CodeInvalidBucketMount, "mount point %s in the sandbox must be a directory reached through no symlink: %v", path, err)
		}
		fd = next
	}
	return fd, nil
}

// rootIDs are the host uid and gid of root in the user namespace of pid;
// 0, 0 without one.
func rootIDs(pid int) (uid, gid int) {
	return firstHostID("/proc/" + strconv.Itoa(pid) + "/uid_map"), firstHostID("/proc/" + strconv.Itoa(pid) + "/gid_map")
}

func firstHostID(file string) int {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "0" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}
