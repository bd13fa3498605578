package diskspace

import (
	"errors"
	"github.com/sbxhq/sbx/wire"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
)

func TestCheckRefusesBelowTheReserve(t *testing.T) {
	dir := t.TempDir()
	if err := New(dir, 1<<20).Check("create"); err != nil {
		t.Errorf("1 MiB reserve: %v", err)
	}
	err := New(dir, 1<<62).Check("create a sandbox")
	if !errdefs.Is(err, errdefs.KindDiskFull) || errdefs.CodeOf(err) != wire.CodeInsufficientStorage {
		t.Errorf("huge reserve: %v, want %s", err, wire.CodeInsufficientStorage)
	}
	if err := New(dir, 0).Check("create"); err != nil {
		t.Errorf("no reserve: %v", err)
	}
	var nilGuard *Guard
	if err := nilGuard.Check("create"); err != nil || nilGuard.Release() || nilGuard.Restore() != nil {
		t.Error("a nil guard must do nothing")
	}
}

func TestBallastIsReleasedAndRestored(t *testing.T) {
	dir := t.TempDir()
	g := New(dir, 1<<20)
	path := filepath.Join(dir, BallastName)
	if g.Release() {
		t.Error("released a ballast that was never made")
	}
	if err := g.Restore(); err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	if st.Blocks*512 < BallastSize {
		t.Errorf("the ballast holds %d bytes of disk, want %d allocated", st.Blocks*512, BallastSize)
	}
	if !g.Release() {
		t.Error("Release found no ballast")
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ballast after release: %v", err)
	}
	// No room for the ballast beside the reserve: it stays away.
	if err := New(dir, 1<<62).Restore(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the ballast came back on a disk without room: %v", err)
	}
}

func TestFullWrapsNoSpace(t *testing.T) {
	err := Full(&os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}, "write the store")
	if !IsNoSpace(err) || !errdefs.Is(err, errdefs.KindDiskFull) {
		t.Errorf("Full(ENOSPC) = %v", err)
	}
	if IsNoSpace(errors.New("other")) || !IsNoSpace(syscall.EDQUOT) {
		t.Error("IsNoSpace")
	}
}
