package runtime

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/image"
	"github.com/sbxhq/sbx/internal/userns"
)

// User namespaces (issue 13.4). A runc instance runs in the user namespace
// that owns its network namespace when that is not the host's (package
// userns makes the pair: the network package for bridge sandboxes, Start
// here for sandboxes with network none). Its root is then an unprivileged
// host id of a range no other live sandbox has, the owner of the namespace,
// so per-user kernel limits (inotify instances, …) it exhausts are its own.
//
// Files on disk keep the image's ids (root is 0), so commit, archive,
// snapshot and fork read them as before; the instance sees them through
// idmapped mounts that shift them into its range (image.MountIdmapped).

// sbxRunDir holds host-wide runtime state: the neutral paths instances'
// root filesystems are mounted at, and the namespaces of sandboxes with
// network none.
const sbxRunDir = "/run/sbx"

// neutralRoot is where an instance's idmapped root filesystem is mounted: a
// path every id can traverse (runc resolves the root as the instance's root,
// which may not enter the daemon's 0700 data directory), and one that tells
// the instance nothing about the host when it reads its mountinfo.
func neutralRoot(id string) string { return filepath.Join(sbxRunDir, id, "rootfs") }

// ownNetns is where the namespaces of an instance with no network namespace
// given (network none) are pinned.
func ownNetns(id string) string { return filepath.Join(sbxRunDir, id, "netns") }

// enterUserns prepares inst to run in its sandbox's user namespace, if it
// has one, and changes spec to match: the root filesystem idmapped at a
// neutral path, the run directory owned by the instance's root, the user
// namespace joined with its mappings. Call release once runc has started
// the instance (or failed to): runc finds the namespace through it.
func enterUserns(inst *Instance, spec *specs.Spec) (release func(), err error) {
	release = func() {}
	// What an instance cut short by a crash left (Start checked that none
	// runs).
	if err := leaveUserns(inst.ID); err != nil {
		return release, err
	}
	dir := filepath.Join(sbxRunDir, inst.ID)
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return release, err
	}
	os.Chmod(sbxRunDir, 0o711)
	netnsPath := inst.NetNSPath
	if netnsPath == "" {
		netnsPath = ownNetns(inst.ID)
		if err := userns.Create(netnsPath); err != nil {
			return release, err
		}
		if err := loopbackUp(netnsPath); err != nil {
			return release, err
		}
	}
	ns, err := userns.Open(netnsPath)
	if err != nil || ns == nil {
		return release, err
	}
	defer func() {
		if err != nil {
			ns.Close()
		}
	}()
	root := neutralRoot(inst.ID)
	if err := image.MountIdmapped(inst.RootfsDir, root, filepath.Join(dir, "l"), ns.Fd, ns.Base); err != nil {
		return release, err
	}
	if err := idmapVolumes(inst, spec, dir, ns.Fd, ns.Base); err != nil {
		return release, err
	}
	if err := chownRunDir(inst.RunDir, int(ns.Base)); err != nil {
		return release, err
	}
	spec.Root.Path = root
	for i := range spec.Linux.Namespaces {
		if spec.Linux.Namespaces[i].Type == specs.NetworkNamespace {
			spec.Linux.Namespaces[i].Path = netnsPath
		}
	}
	spec.Linux.Namespaces = append(spec.Linux.Namespaces, specs.LinuxNamespace{Type: specs.UserNamespace, Path: ns.Path()})
	// runc 1.1 joins a namespace given by path and wants its mappings all
	// the same.
	m := []specs.LinuxIDMapping{{ContainerID: 0, HostID: ns.Base, Size: userns.Size}}
	spec.Linux.UIDMappings, spec.Linux.GIDMappings = m, m
	// runc sets rlimits from outside with prlimit, which on a process in a
	// namespace root does not own needs CAP_SYS_RESOURCE; a host that
	// denies it to sbx would fail every start. The instance then inherits
	// the daemon's limits, which nofileLimit caps the spec's to anyway.
	if !hasCapability(unix.CAP_SYS_RESOURCE) {
		spec.Process.Rlimits = nil
	}
	return func() { ns.Close() }, nil
}

// leaveUserns removes what enterUserns made for instance id: its idmapped
// root, the views it was mounted through if a crash left them, and, for
// network none, its namespaces. Nothing is removed recursively: a view
// still attached shows the shared layer store.
func leaveUserns(id string) error {
	dir := filepath.Join(sbxRunDir, id)
	// Everything enterUserns makes is inside dir (it makes dir first): with
	// no dir there is nothing to clear, and clearing would read the host's
	// whole mount table and id ranges (a fresh create's case).
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := image.DetachUnder(dir); err != nil {
		return err
	}
	if err := userns.Remove(ownNetns(id)); err != nil {
		return err
	}
	paths := []string{}
	for _, sub := range []string{"l", "v"} { // rootfs views, volume views
		views, _ := os.ReadDir(filepath.Join(dir, sub))
		for _, v := range views {
			paths = append(paths, filepath.Join(dir, sub, v.Name()))
		}
		paths = append(paths, filepath.Join(dir, sub))
	}
	paths = append(paths, neutralRoot(id), dir)
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// chownRunDir gives the run directory and what it holds (logs of earlier
// instances, made under another range) to the instance's root.
func chownRunDir(dir string, uid int) error {
	if err := os.Lchown(dir, uid, uid); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.Lchown(filepath.Join(dir, e.Name()), uid, uid); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// loopbackUp brings up lo in the network namespace at path, as runc does in
// a namespace it makes itself.
func loopbackUp(path string) error {
	ns, err := netns.GetFromPath(path)
	if err != nil {
		return err
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return fmt.Errorf("netlink in %s: %w", path, err)
	}
	defer h.Close()
	lo, err := h.LinkByName("lo")
	if err == nil {
		err = h.LinkSetUp(lo)
	}
	if err != nil {
		return fmt.Errorf("bring up loopback in %s: %w", path, err)
	}
	return nil
}

// idmapVolumes mounts each volume idmapped into the instance's range at
// dir/v/N and points its bind mount there: ids on the volume's disk are
// the sandbox's own (root is 0), whichever range the sandbox has, so
// sandboxes with different ranges share files.
func idmapVolumes(inst *Instance, spec *specs.Spec, dir string, usernsFD int, base uint32) error {
	if len(inst.Volumes) == 0 {
		return nil
	}
	// Traversable by the instance's root, which runc mounts as.
	views := filepath.Join(dir, "v")
	if err := os.MkdirAll(views, 0o711); err != nil {
		return err
	}
	if err := os.Chmod(views, 0o711); err != nil {
		return err
	}
	for i, v := range inst.Volumes {
		if v.NoIdmap {
			continue
		}
		view := filepath.Join(views, strconv.Itoa(i))
		if err := image.MountIdmapped(v.Source, view, filepath.Join(dir, "l"), usernsFD, base); err != nil {
			return fmt.Errorf("idmap volume at %s: %w", v.Destination, err)
		}
		for j := range spec.Mounts {
			if spec.Mounts[j].Source == v.Source && spec.Mounts[j].Destination == v.Destination {
				spec.Mounts[j].Source = view
			}
		}
	}
	return nil
}
