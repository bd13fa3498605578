package userns

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// lockSlots takes the host-wide lock on the table of id ranges; every
// daemon on the host takes it around a claim or a release.
func lockSlots() (unlock func(), err error) {
	if err := os.MkdirAll(slotsDir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(slotsDir, ".lock"), os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock id ranges: %w", err)
	}
	return func() { f.Close() }, nil
}

// freeSlot returns the lowest slot no live sandbox holds. A claim whose
// network namespace is gone (its daemon's data directory was removed without
// deleting its sandboxes) is stale and taken over. Call with the lock held.
func freeSlot() (int, error) {
	for slot := range maxSlots {
		claim := filepath.Join(slotsDir, strconv.Itoa(slot))
		b, err := os.ReadFile(claim)
		if errors.Is(err, os.ErrNotExist) {
			return slot, nil
		}
		if err != nil {
			return 0, err
		}
		if !holds(string(b), Base(slot)) {
			os.Remove(claim)
			return slot, nil
		}
	}
	return 0, fmt.Errorf("all %d user id ranges are in use", maxSlots)
}

// holds reports whether a network namespace is pinned at path in a user
// namespace owned by base.
func holds(path string, base uint32) bool {
	ns, err := Open(path)
	if err != nil || ns == nil {
		return false
	}
	defer ns.Close()
	return ns.Base == base
}
