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

// freeSlot returns the lowest slot no claim names; when every slot is
// claimed, the lowest whose claim is stale (its network namespace is gone:
// its daemon's data directory was removed without deleting its sandboxes),
// which it takes over. One directory read in the usual case: checking every
// claim would cost each create a file read and a namespace open per live
// sandbox on the host. Call with the lock held.
func freeSlot() (int, error) {
	names, err := readClaims()
	if err != nil {
		return 0, err
	}
	for slot := range slots {
		if !names[slot] {
			return slot, nil
		}
	}
	for slot := range slots {
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
	return 0, fmt.Errorf("all %d user id ranges are in use", slots)
}

// slots is how many ranges there are to hand out; a variable so tests can
// run out of them.
var slots = maxSlots

// readClaims returns the slots that have a claim file.
func readClaims() (map[int]bool, error) {
	entries, err := os.ReadDir(slotsDir)
	if err != nil {
		return nil, err
	}
	taken := make(map[int]bool, len(entries))
	for _, e := range entries {
		if slot, err := strconv.Atoi(e.Name()); err == nil {
			taken[slot] = true
		}
	}
	return taken, nil
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
