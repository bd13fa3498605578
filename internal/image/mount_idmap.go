package image

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// Idmapped root filesystems (issue 13.4). A class-container instance runs in
// a user namespace whose root is an unprivileged host id. Files on disk keep
// the image's ids (root is 0), so commit, archive, snapshot and fork read
// them as they always did; the instance sees them through idmapped mounts
// that shift them into its range. Overlayfs cannot itself be idmapped, but
// its layers can (Linux 5.19): the overlay is mounted again over idmapped
// views of its lower layers and of its upper and work directories.

// MountIdmapped makes the root filesystem at src visible at dst with file
// ids shifted by the user namespace usernsFD, whose root is the host id
// hostRoot. When src is an overlay, it is mounted again with idmapped layers
// at dst and src becomes a bind mount of dst (unmounting src as before still
// unmounts it; dst must be unmounted too). A plain directory is bind-mounted
// at dst idmapped and src is left alone. stage is an empty directory for
// short-lived mounts; its paths, not the host's, are what the overlay's
// options (and the instance's mountinfo) show.
func MountIdmapped(src, dst, stage string, usernsFD int, hostRoot uint32) error {
	for _, d := range []string{dst, stage} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	ov, err := knownOverlayAt(src)
	if err != nil {
		return err
	}
	if ov == nil {
		return idmapInto(src, dst, usernsFD)
	}
	// One idmapped mount per directory holding layers (usually one: the
	// layer store), and one of the directory holding upper and work: overlay
	// wants them on one mount.
	if filepath.Dir(ov.upper) != filepath.Dir(ov.work) {
		return fmt.Errorf("overlay at %s: upper and work directories are not siblings", src)
	}
	var staged []string
	defer func() {
		for _, s := range staged {
			unix.Unmount(s, unix.MNT_DETACH)
			os.Remove(s)
		}
	}()
	views := map[string]string{} // host directory → its idmapped view under stage
	view := func(path string) (string, error) {
		dir := filepath.Dir(path)
		if v, ok := views[dir]; ok {
			return filepath.Join(v, filepath.Base(path)), nil
		}
		v := filepath.Join(stage, fmt.Sprint(len(views)))
		if err := os.MkdirAll(v, 0o700); err != nil {
			return "", err
		}
		if err := idmapInto(dir, v, usernsFD); err != nil {
			return "", err
		}
		staged = append(staged, v)
		views[dir] = v
		return filepath.Join(v, filepath.Base(path)), nil
	}
	lowers := make([]string, len(ov.lowers))
	for i, l := range ov.lowers {
		if lowers[i], err = view(l); err != nil {
			return err
		}
	}
	upper, err := view(ov.upper)
	if err != nil {
		return err
	}
	work := filepath.Join(filepath.Dir(upper), filepath.Base(ov.work))
	if err := Unmount(src); err != nil {
		return err
	}
	opts := "lowerdir=" + strings.Join(lowers, ":") + ",upperdir=" + upper + ",workdir=" + work
	err = asHostID(hostRoot, func() error {
		if len(opts) < os.Getpagesize() {
			return unix.Mount("overlay", dst, "overlay", 0, opts)
		}
		return mountMany(lowers, upper, work, dst)
	})
	if err != nil {
		return fmt.Errorf("mount idmapped overlay at %s: %w", dst, err)
	}
	if err := unix.Mount(dst, src, "", unix.MS_BIND, ""); err != nil {
		unix.Unmount(dst, unix.MNT_DETACH)
		return fmt.Errorf("bind idmapped overlay at %s: %w", src, err)
	}
	return nil
}

// idmapInto bind-mounts src at dst (an existing directory) with ids shifted
// by the user namespace usernsFD.
func idmapInto(src, dst string, usernsFD int) error {
	tree, err := unix.OpenTree(unix.AT_FDCWD, src, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return fmt.Errorf("open_tree %s: %w", src, err)
	}
	defer unix.Close(tree)
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP, Userns_fd: uint64(usernsFD)}
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH, attr); err != nil {
		return fmt.Errorf("idmap %s (does its file system support idmapped mounts?): %w", src, err)
	}
	if err := unix.MoveMount(tree, "", unix.AT_FDCWD, dst, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("move idmapped mount to %s: %w", dst, err)
	}
	return nil
}

// asHostID runs mount on a thread whose file-system ids are hostID. Overlayfs
// does its work in the upper directory with the mounter's credentials; host
// root (id 0) has no id through an idmapped upper (EOVERFLOW), the sandbox's
// root does. SECBIT_NO_SETUID_FIXUP keeps the capabilities a change of fsuid
// would drop.
func asHostID(hostID uint32, mount func() error) error {
	goruntime.LockOSThread()
	old, err := unix.PrctlRetInt(unix.PR_GET_SECUREBITS, 0, 0, 0, 0)
	if err != nil {
		goruntime.UnlockOSThread()
		return err
	}
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, uintptr(old|secbitNoSetuidFixup), 0, 0, 0); err != nil {
		goruntime.UnlockOSThread()
		return fmt.Errorf("set securebits: %w", err)
	}
	unix.Setfsuid(int(hostID))
	unix.Setfsgid(int(hostID))
	err = mount()
	unix.Setfsuid(0)
	unix.Setfsgid(0)
	uid, _ := unix.SetfsuidRetUid(-1) // -1 changes nothing and returns the current one
	gid, _ := unix.SetfsgidRetGid(-1)
	rerr := unix.Prctl(unix.PR_SET_SECUREBITS, uintptr(old), 0, 0, 0)
	if uid == 0 && gid == 0 && rerr == nil {
		goruntime.UnlockOSThread()
	} // else the thread stays locked and ends with this goroutine
	return err
}

// overlay is what an overlay mount was made of.
type overlay struct {
	lowers      []string // top first, as overlayfs lists them
	upper, work string
}

// knownOverlayAt is overlayAt with the host paths of an overlay
// MountRootfs made (its options name only the staged ones). Such an overlay
// still on top at target is taken without reading the host's mount table,
// which holds every mount of every sandbox: each create would read it.
func knownOverlayAt(target string) (*overlay, error) {
	abs, err := filepath.Abs(target)
	if err != nil {
		return nil, err
	}
	known, ok := mountedLayers.Load(abs)
	if ok && isMountRoot(abs) && fsType(abs) == unix.OVERLAYFS_SUPER_MAGIC {
		return known.(*overlay), nil
	}
	ov, err := overlayAt(abs)
	if ov != nil && ok {
		ov = known.(*overlay)
	}
	return ov, err
}

// isMountRoot reports whether path is the root of a mount (statx), false
// when the kernel cannot tell.
func isMountRoot(path string) bool {
	var st unix.Statx_t
	if unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, 0, &st) != nil {
		return false
	}
	return st.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT != 0 && st.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0
}

// fsType is the file system magic of what path shows, 0 if unknown.
func fsType(path string) int64 {
	var st unix.Statfs_t
	if unix.Statfs(path, &st) != nil {
		return 0
	}
	return st.Type
}

// overlayAt returns the layers of the overlay mounted at target, or nil if
// none is (target is a plain directory).
func overlayAt(target string) (*overlay, error) {
	abs, err := filepath.Abs(target)
	if err != nil {
		return nil, err
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var found *overlay
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent dev root mountpoint opts [optional...] - fstype source superopts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(tail) < 3 || unescapeMountinfo(fields[4]) != abs {
			continue
		}
		found = nil // the last mount on target is the visible one
		if tail[0] != "overlay" {
			continue
		}
		ov := &overlay{}
		for _, o := range strings.Split(tail[2], ",") {
			k, v, _ := strings.Cut(o, "=")
			v = unescapeMountinfo(v)
			switch k {
			case "lowerdir":
				ov.lowers = append(ov.lowers, strings.Split(v, ":")...)
			case "lowerdir+":
				ov.lowers = append(ov.lowers, v)
			case "upperdir":
				ov.upper = v
			case "workdir":
				ov.work = v
			}
		}
		if len(ov.lowers) == 0 || ov.upper == "" || ov.work == "" {
			return nil, errors.New("image: cannot read the layers of the overlay at " + abs)
		}
		found = ov
	}
	return found, sc.Err()
}

// secbitNoSetuidFixup is SECBIT_NO_SETUID_FIXUP (linux/securebits.h).
const secbitNoSetuidFixup = 1 << 2
