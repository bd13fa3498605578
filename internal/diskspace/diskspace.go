// Package diskspace keeps the data dir's disk usable when sandboxes fill it.
//
// Two mechanisms, one Guard:
//
//   - A reserve: while the disk has less free space than the reserve, new
//     growth (creating a sandbox, starting one, importing an image) is
//     refused with 507 INSUFFICIENT_STORAGE. A running sandbox without
//     diskMiB can still write into the reserve; the reserve is what lets
//     the operator notice and act before the disk is full.
//   - A ballast: a file of BallastSize allocated blocks in the data dir. When
//     a store write fails because the disk is full, the store releases the
//     ballast and retries, so stop and delete (which free space) can always
//     be recorded. The ballast comes back once the disk has room again.
package diskspace

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// BallastSize is the space the ballast holds for the store. A stop or a
// delete appends a few pages to SQLite's WAL; 16 MiB is room for thousands.
const BallastSize = 16 << 20

// BallastName is the ballast's file name in the data dir.
const BallastName = "disk-ballast"

// Guard watches the free space of one directory's filesystem. The zero
// reserve refuses nothing; a nil *Guard does nothing at all.
type Guard struct {
	dir     string
	reserve uint64 // bytes

	mu          sync.Mutex // serialises Release and Restore
	noFallocate bool       // the filesystem cannot allocate: no ballast
}

// New returns a guard of dir that keeps reserveBytes free.
func New(dir string, reserveBytes uint64) *Guard {
	return &Guard{dir: dir, reserve: reserveBytes}
}

// Free returns the bytes an unprivileged writer can still use on dir's
// filesystem.
func (g *Guard) Free() (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(g.dir, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}

// Spare returns the free space above the reserve: 0 below it.
func (g *Guard) Spare() (uint64, error) {
	free, err := g.Free()
	if err != nil || free < g.reserve {
		return 0, err
	}
	return free - g.reserve, nil
}

// Check refuses an operation that makes the data dir grow when the free
// space is below the reserve. what names the operation for the message.
func (g *Guard) Check(what string) error {
	if g == nil || g.reserve == 0 {
		return nil
	}
	free, err := g.Free()
	if err != nil {
		return errdefs.Internal(err, "read the free space of %s", g.dir)
	}
	if free < g.reserve {
		return errdefs.DiskFull(wire.CodeInsufficientStorage,
			"cannot %s: the host's data disk has %d MiB free, less than the %d MiB reserve; delete sandboxes, snapshots or images to free space",
			what, free>>20, g.reserve>>20)
	}
	return nil
}

func (g *Guard) ballast() string { return filepath.Join(g.dir, BallastName) }

// Release deletes the ballast and reports whether it was there, i.e.
// whether a retry can find space it did not have.
func (g *Guard) Release() bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if os.Remove(g.ballast()) != nil {
		return false
	}
	slog.Warn("the data dir's disk is full: released the disk ballast so the store can write; free space (delete sandboxes) soon", "dir", g.dir)
	return true
}

// Restore makes the ballast if it is missing and the disk has room for it
// and the reserve besides (so it never takes the last free space).
func (g *Guard) Restore() error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	path := g.ballast()
	if g.noFallocate {
		return nil
	}
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	free, err := g.Free()
	if err != nil {
		return err
	}
	if free < g.reserve+2*BallastSize {
		return nil
	}
	// Allocated, not sparse: the blocks must be the ballast's until released.
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	err = unix.Fallocate(int(f.Fd()), 0, 0, BallastSize)
	// Not tried again after every store write.
	g.noFallocate = errors.Is(err, unix.EOPNOTSUPP)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("make disk ballast: %w", err)
	}
	return nil
}

// IsNoSpace reports whether err says a disk or a quota is full.
func IsNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// Full returns the error for a write that found a host disk (the data dir's
// or the blob dir's) full.
func Full(err error, what string) error {
	return &errdefs.Error{Kind: errdefs.KindDiskFull, Code: wire.CodeInsufficientStorage,
		Message: fmt.Sprintf("cannot %s: no space left on the host's disk; delete sandboxes, snapshots, archives or images to free space", what),
		Err:     err}
}
