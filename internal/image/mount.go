package image

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/errdefs"
)

// MountRootfs mounts an overlay at target with layerDirs (bottom first, as
// LayerDirs returns them) read-only below the writable upper. It creates
// upper, work and target if missing. Mounting the same upper again later shows
// the writes made before.
func MountRootfs(layerDirs []string, upper, work, target string) error {
	if len(layerDirs) == 0 {
		return errors.New("image: an overlay needs at least one layer")
	}
	lowers := slices.Clone(layerDirs)
	slices.Reverse(lowers) // overlayfs lists the top layer first
	all := append(slices.Clone(lowers), upper, work, target)
	for i, d := range all {
		abs, err := filepath.Abs(d)
		if err != nil {
			return err
		}
		// The option string cannot carry these (the target is not in it).
		if i < len(all)-1 && strings.ContainsAny(abs, ",:\\") {
			return fmt.Errorf("image: overlay path %q contains ',', ':' or '\\'", abs)
		}
		all[i] = abs
	}
	lowers, upper, work, target = all[:len(lowers)], all[len(lowers)], all[len(lowers)+1], all[len(lowers)+2]
	if filepath.Dir(upper) != filepath.Dir(work) {
		return fmt.Errorf("image: overlay upper %s and work %s must be in one directory", upper, work)
	}
	for _, d := range []string{upper, work, target} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return errdefs.Internal(err, "preparing overlay at %s", target)
		}
	}
	// Mount through neutral paths: the overlay's options, which code inside
	// reads in /proc/self/mountinfo, then name no host directory.
	staged, unstage, err := stageParents(append(slices.Clone(lowers), upper))
	if err != nil {
		return errdefs.Internal(err, "preparing overlay at %s", target)
	}
	defer unstage()
	lowers, upper = staged[:len(lowers)], staged[len(lowers)]
	work = filepath.Join(filepath.Dir(upper), filepath.Base(work))
	opts := "lowerdir=" + strings.Join(lowers, ":") + ",upperdir=" + upper + ",workdir=" + work
	if len(opts) < os.Getpagesize() {
		err = unix.Mount("overlay", target, "overlay", 0, opts)
	} else {
		err = mountMany(lowers, upper, work, target)
	}
	if err != nil {
		return errdefs.Internal(err, "mounting overlay at %s", target)
	}
	mountedLayers.Store(target, &overlay{lowers: slices.Clone(all[:len(lowers)]), upper: all[len(lowers)], work: all[len(lowers)+1]})
	return nil
}

// mountedLayers maps the target of each overlay MountRootfs made to its
// host layer paths, for MountIdmapped: the overlay's own options name only
// the short-lived staged paths it was mounted through.
var mountedLayers sync.Map // string → *overlay

// stageDir is where stageParents makes its short-lived mounts, each set
// in a directory named after the daemon's pid (see CleanStaleStages).
var stageDir = "/run/sbx/stage"

// stageParents bind-mounts the directory holding each of paths under a
// fresh directory in stageDir and returns the paths through those mounts.
// unstage detaches the mounts and removes the directory; an overlay mounted
// meanwhile keeps its layers.
func stageParents(paths []string) (staged []string, unstage func(), err error) {
	if err := os.MkdirAll(stageDir, 0o700); err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp(stageDir, strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, nil, err
	}
	var mounted []string
	unstage = func() {
		// Never RemoveAll here: through a mount still attached it would
		// delete the layers themselves.
		for _, m := range mounted {
			unix.Unmount(m, unix.MNT_DETACH)
			os.Remove(m)
		}
		os.Remove(dir)
	}
	views := map[string]string{}
	for _, p := range paths {
		parent := filepath.Dir(p)
		v, ok := views[parent]
		if !ok {
			v = filepath.Join(dir, strconv.Itoa(len(views)))
			if err := os.Mkdir(v, 0o700); err != nil {
				unstage()
				return nil, nil, err
			}
			if err := unix.Mount(parent, v, "", unix.MS_BIND, ""); err != nil {
				unstage()
				return nil, nil, fmt.Errorf("bind %s: %w", parent, err)
			}
			mounted = append(mounted, v)
			views[parent] = v
		}
		staged = append(staged, filepath.Join(v, filepath.Base(p)))
	}
	return staged, unstage, nil
}

// CleanStaleStages removes the staging mounts of daemons that died before
// undoing them (a kill -9 mid-create). stageDir is shared by every daemon
// on the host, so a set is stale only when the pid in its name is not
// running, or is this process's (which made none yet); a set named the old
// way, without a pid, when it is older than a minute.
func CleanStaleStages() error {
	entries, err := os.ReadDir(stageDir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	var errs []error
	for _, e := range entries {
		if !stageIsStale(e) {
			continue
		}
		dir := filepath.Join(stageDir, e.Name())
		if err := DetachUnder(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		views, _ := os.ReadDir(dir)
		for _, v := range views {
			os.Remove(filepath.Join(dir, v.Name())) // empty once detached
		}
		if err := os.Remove(dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func stageIsStale(e os.DirEntry) bool {
	pidText, _, hasPid := strings.Cut(e.Name(), "-")
	if pid, err := strconv.Atoi(pidText); hasPid && err == nil && pid > 0 {
		return pid == os.Getpid() || errors.Is(unix.Kill(pid, 0), unix.ESRCH)
	}
	info, err := e.Info()
	return err == nil && time.Since(info.ModTime()) > time.Minute
}

// mountMany mounts an overlay whose options exceed the one page mount(2)
// takes, adding lower layers one by one ("lowerdir+", Linux 6.8 and later).
func mountMany(lowers []string, upper, work, target string) error {
	fd, err := unix.Fsopen("overlay", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("fsopen: %w", err)
	}
	defer unix.Close(fd)
	for _, l := range lowers {
		if err := unix.FsconfigSetString(fd, "lowerdir+", l); err != nil {
			return fmt.Errorf("overlay with %d layers needs Linux 6.8 or later: %w", len(lowers), err)
		}
	}
	if err := unix.FsconfigSetString(fd, "upperdir", upper); err != nil {
		return err
	}
	if err := unix.FsconfigSetString(fd, "workdir", work); err != nil {
		return err
	}
	if err := unix.FsconfigCreate(fd); err != nil {
		return fmt.Errorf("fsconfig create: %w", err)
	}
	mfd, err := unix.Fsmount(fd, unix.FSMOUNT_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("fsmount: %w", err)
	}
	defer unix.Close(mfd)
	return unix.MoveMount(mfd, "", unix.AT_FDCWD, target, unix.MOVE_MOUNT_F_EMPTY_PATH)
}

// Unmount unmounts target. A target that is not mounted, or does not exist, is
// fine. A busy mount is detached lazily: it goes away once no longer used.
func Unmount(target string) error {
	if abs, err := filepath.Abs(target); err == nil {
		mountedLayers.Delete(abs)
	}
	err := unix.Unmount(target, 0)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EBUSY):
		err = unix.Unmount(target, unix.MNT_DETACH)
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOENT):
		if mounted, merr := IsMounted(target); merr == nil && !mounted {
			return nil
		}
	}
	if err != nil {
		return errdefs.Internal(err, "unmounting %s", target)
	}
	return nil
}

// DetachUnder lazily unmounts every mount at or below dir, deepest first, so
// that removing dir afterwards cannot reach into what they showed.
func DetachUnder(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	var targets []string
	for _, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 4 {
			if t := unescapeMountinfo(fields[4]); t == abs || strings.HasPrefix(t, abs+"/") {
				targets = append(targets, t)
			}
		}
	}
	// Later mounts first: a mount on top of another, or below it, was made
	// after it.
	var errs []error
	for _, t := range slices.Backward(targets) {
		if err := unix.Unmount(t, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", t, err))
		}
	}
	return errors.Join(errs...)
}

// IsMounted reports whether a file system is mounted at target, according to
// /proc/self/mountinfo. A missing target is not mounted.
func IsMounted(target string) (bool, error) {
	abs, err := filepath.Abs(target)
	if err != nil {
		return false, err
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		if os.IsNotExist(err) {
			return false, nil
		}
		return false, err
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// Fields: id parent major:minor root mountpoint options ...
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && unescapeMountinfo(fields[4]) == abs {
			return true, nil
		}
	}
	return false, sc.Err()
}

// unescapeMountinfo decodes the octal escapes (\040 for space, …) the kernel
// puts in mountinfo paths.
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
