// Package userns makes the namespaces a class-container sandbox runs in: a
// user namespace whose ids 0..Size-1 are a range of host ids no other live
// sandbox on the host has, and a network namespace inside it (issue 13.4).
//
// The user namespace is owned by the first host id of its range, not by
// root: the kernel charges per-user counts (inotify instances, user
// namespaces, …) made inside a namespace to its owner at the parent level, so
// a sandbox that exhausts them exhausts its own range's, not host root's. The
// network namespace is made inside it, so the sandbox's root may mount sysfs
// there and bind ports below 1024; host root keeps full power over it (the
// daemon wires its veth and addresses as before).
//
// Only the network namespace is pinned (a bind mount of its nsfs file, as the
// network package always did); it holds its owning user namespace alive, and
// Open finds that one again through it. So a daemon restart needs no state of
// its own, and deleting the pin frees both.
package userns

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	// Size is how many ids a sandbox gets: a full 16-bit range, as images
	// expect (nobody is 65534).
	Size = 65536
	// FirstHostID is where ranges begin: above any host user's id and above
	// the ranges /etc/subuid hands out to rootless containers (100000 up).
	FirstHostID = 1 << 30
	// maxSlots fits every range below 2^31.
	maxSlots = 1 << 14
)

// slotsDir is the host-wide table of taken ranges, one file per slot holding
// the path of the network namespace that uses it. It is on tmpfs: after a
// reboot no namespace exists and no range is taken. Every daemon on the host
// shares it, so sandboxes of different daemons never share a range.
var slotsDir = "/run/sbx/idranges"

// Base returns the first host id of slot's range.
func Base(slot int) uint32 { return FirstHostID + uint32(slot)*Size }

// Create makes a user namespace owned by a free host id range, with a
// network namespace inside it, and pins the network namespace at netnsPath
// (which must not exist). On error nothing is left.
func Create(netnsPath string) error {
	unlock, err := lockSlots()
	if err != nil {
		return err
	}
	defer unlock()
	slot, err := freeSlot()
	if err != nil {
		return err
	}
	claim := filepath.Join(slotsDir, strconv.Itoa(slot))
	if err := os.WriteFile(claim, []byte(netnsPath), 0o600); err != nil {
		return fmt.Errorf("claim id range %d: %w", slot, err)
	}
	if err := createPinned(netnsPath, Base(slot)); err != nil {
		os.Remove(claim)
		return err
	}
	return nil
}

// createPinned runs a helper as host id base that unshares a user and a
// network namespace, maps ids 0..Size-1 to base.. (host root may write the
// maps of a namespace a child of its own made), and pins the network
// namespace at path. The helper then ends. Go cannot unshare a user
// namespace in a threaded process, and a namespace Go clones for a child is
// owned by the parent's id (root), hence unshare(1) run as base.
func createPinned(path string, base uint32) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDONLY, 0o400)
	if err != nil {
		return fmt.Errorf("create netns file: %w", err)
	}
	f.Close()
	if err := runHelper(path, base); err != nil {
		unix.Unmount(path, unix.MNT_DETACH)
		os.Remove(path)
		return err
	}
	return nil
}

func runHelper(path string, base uint32) error {
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return fmt.Errorf("unshare (util-linux) is not on PATH: %w", err)
	}
	// Pdeathsig is sent when the thread that started the helper ends, and
	// Go ends threads that goroutines locked (network setup does): keep
	// this one until the helper is done.
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	// The shell says when it runs in the new namespaces, then waits for
	// its stdin to close.
	cmd := exec.Command(unshare, "--user", "--net", "/bin/sh", "-c", "echo ready; read x")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: &syscall.Credential{Uid: base, Gid: base, Groups: []uint32{}},
		Pdeathsig:  syscall.SIGKILL,
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the namespace helper: %w", err)
	}
	defer func() {
		stdin.Close()
		cmd.Process.Kill() // a no-op when it has ended by itself
		cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		return fmt.Errorf("namespace helper (unshare --user --net as uid %d) failed: %q %v: %s", base, line, err, strings.TrimSpace(stderr.String()))
	}
	pid := cmd.Process.Pid
	mapping := []byte(fmt.Sprintf("0 %d %d\n", base, Size))
	for _, name := range []string{"uid_map", "gid_map"} {
		if err := os.WriteFile(fmt.Sprintf("/proc/%d/%s", pid, name), mapping, 0); err != nil {
			return fmt.Errorf("write %s of the namespace helper: %w", name, err)
		}
	}
	if err := unix.Mount(fmt.Sprintf("/proc/%d/ns/net", pid), path, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("pin network namespace at %s: %w", path, err)
	}
	return nil
}

// Remove unpins the network namespace at path and gives back the id range
// of its user namespace. The namespaces go when their last process does.
// A missing pin is not an error.
func Remove(path string) error {
	unlock, err := lockSlots()
	if err != nil {
		return err
	}
	defer unlock()
	// The namespace's owner names its slot: one claim to read, not every
	// claim on the host. The search below is for a pin already gone.
	slot := -1
	if ns, err := Open(path); err == nil && ns != nil {
		if ns.Base >= FirstHostID && (ns.Base-FirstHostID)%Size == 0 {
			slot = int((ns.Base - FirstHostID) / Size)
		}
		ns.Close()
	}
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmount %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if slot >= 0 {
		claim := filepath.Join(slotsDir, strconv.Itoa(slot))
		if b, err := os.ReadFile(claim); err == nil && string(b) == path {
			return os.Remove(claim)
		}
	}
	entries, _ := os.ReadDir(slotsDir)
	for _, e := range entries {
		claim := filepath.Join(slotsDir, e.Name())
		if b, err := os.ReadFile(claim); err == nil && string(b) == path {
			os.Remove(claim)
		}
	}
	return nil
}

// Namespace is the sandbox user namespace owning a network namespace.
type Namespace struct {
	Fd   int    // an open descriptor of the user namespace; Close it
	Base uint32 // the host id that sandbox id 0 is (and that owns it)
}

// Close closes the descriptor.
func (n *Namespace) Close() error { return unix.Close(n.Fd) }

// Path is a path to the namespace for a child process of this one (runc),
// valid while n is open.
func (n *Namespace) Path() string { return fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), n.Fd) }

// Open returns the user namespace that owns the network namespace pinned at
// netnsPath, or nil when that is the host's (a namespace made before sbx
// used user namespaces, or for class gvisor).
func Open(netnsPath string) (*Namespace, error) {
	ns, err := unix.Open(netnsPath, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(ns)
	fd, err := ioctlFd(ns, nsGetUserns)
	if err != nil {
		return nil, fmt.Errorf("owner of network namespace %s: %w", netnsPath, err)
	}
	var st, ours unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if err := unix.Stat("/proc/self/ns/user", &ours); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if st.Ino == ours.Ino && st.Dev == ours.Dev {
		unix.Close(fd)
		return nil, nil
	}
	owner, err := ownerUID(fd)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &Namespace{Fd: fd, Base: owner}, nil
}

// ioctls on nsfs files (linux/nsfs.h).
const (
	nsGetUserns   = 0xb701 // _IO(0xb7, 0x1)
	nsGetOwnerUID = 0xb704 // _IO(0xb7, 0x4)
)

func ioctlFd(fd int, req uint) (int, error) {
	r, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), 0)
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}

func ownerUID(usernsFd int) (uint32, error) {
	var uid uint32
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(usernsFd), nsGetOwnerUID, uintptr(unsafe.Pointer(&uid)))
	if errno != 0 {
		return 0, fmt.Errorf("owner of user namespace: %w", errno)
	}
	return uid, nil
}
