package network

import (
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/userns"
)

// A sandbox's network namespace is made by sbx, not by the runtime, and
// pinned by a bind mount of its nsfs file at a path, so it exists before the
// instance starts (the veth goes in first) and outlives the daemon. The
// runtime joins it by path.

// createNetns makes a new network namespace pinned at path. path must not
// be in use. With inUserns it is made inside a user namespace of its own,
// owned by a host id range of its own (package userns): class container
// runs there. Host root keeps every power over it, so the veth, addresses
// and routes below are made the same way.
func createNetns(path string, inUserns bool) error {
	if inUserns {
		return userns.Create(path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDONLY, 0o400)
	if err != nil {
		return fmt.Errorf("create netns file: %w", err)
	}
	f.Close()
	errc := make(chan error, 1)
	// The unshare changes the namespace of the calling thread. The thread
	// stays locked and is thrown away when the goroutine ends, so no other
	// goroutine ever runs in the new namespace by mistake.
	go func() {
		goruntime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("unshare network namespace: %w", err)
			return
		}
		src := fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid())
		if err := unix.Mount(src, path, "", unix.MS_BIND, ""); err != nil {
			errc <- fmt.Errorf("pin network namespace at %s: %w", path, err)
			return
		}
		errc <- nil
	}()
	if err := <-errc; err != nil {
		os.Remove(path)
		return err
	}
	return nil
}

// removeNetns unpins the namespace at path and removes the file, and gives
// back the id range of its user namespace if it has one. The namespace
// itself goes when its last process does. Missing is not an error.
func removeNetns(path string) error {
	return userns.Remove(path)
}

// isNetns reports whether path is a pinned network namespace.
func isNetns(path string) bool {
	var st unix.Statfs_t
	return unix.Statfs(path, &st) == nil && st.Type == unix.NSFS_MAGIC
}

// inNetns runs fn on a thread that has joined the namespace at path. The
// thread is discarded afterwards.
func inNetns(path string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		goruntime.LockOSThread()
		ns, err := netns.GetFromPath(path)
		if err != nil {
			errc <- err
			return
		}
		defer ns.Close()
		if err := netns.Set(ns); err != nil {
			errc <- fmt.Errorf("enter network namespace %s: %w", path, err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}
