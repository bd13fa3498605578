package store

import (
	"context"
	"fmt"
	"github.com/sbxhq/sbx/internal/auth"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sbxhq/sbx/internal/diskspace"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// TestWritesOnAFullDisk fills a small tmpfs that holds the database: a write
// then takes the ballast's space and succeeds; with the ballast gone too it
// answers INSUFFICIENT_STORAGE, not INTERNAL; a create is refused below the
// reserve; once space is freed, writes work and the ballast comes back.
func TestWritesOnAFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs")
	}
	dir := t.TempDir()
	size := 4*diskspace.BallastSize + walPrealloc + (8 << 20)
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	ctx := auth.System(context.Background(), "test")
	guard := diskspace.New(dir, 2*diskspace.BallastSize)
	s, err := OpenSQLite(filepath.Join(dir, "sbx.db"), WithDiskGuard(guard))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ballast := filepath.Join(dir, diskspace.BallastName)
	if _, err := os.Stat(ballast); err != nil {
		t.Fatalf("no ballast after open: %v", err)
	}
	sb := &Sandbox{ID: "sbx-1", State: "started"}
	if err := s.CreateSandbox(ctx, sb); err != nil {
		t.Fatal(err)
	}

	fill := filepath.Join(dir, "fill")
	fillDisk(t, fill)
	// Writes that grow the WAL until it needs a block the disk lacks.
	update := func(state wire.State) error {
		sb.State = state
		return s.UpdateSandbox(ctx, sb, &Event{State: state, Message: strings.Repeat("x", 2000)})
	}
	// The WAL's preallocated blocks take the first writes, the ballast
	// the next ones.
	wal := filepath.Join(dir, "sbx.db-wal")
	var st syscall.Stat_t
	if err := syscall.Stat(wal, &st); err != nil || st.Blocks*512 < walPrealloc {
		t.Errorf("the WAL holds %d bytes of disk (%v), want %d preallocated", st.Blocks*512, err, walPrealloc)
	}
	for i := 0; i < 5000; i++ {
		if err := update("stopping"); err != nil {
			t.Fatalf("write %d on a full disk with a ballast to release: %v", i, err)
		}
		if _, err := os.Stat(ballast); os.IsNotExist(err) {
			break
		}
	}
	if _, err := os.Stat(ballast); !os.IsNotExist(err) {
		t.Fatalf("the ballast was not released: %v", err)
	}
	if err := s.CreateSandbox(ctx, &Sandbox{ID: "sbx-2", State: "created"}); errdefs.CodeOf(err) != wire.CodeInsufficientStorage {
		t.Errorf("create below the reserve: %v, want %s", err, wire.CodeInsufficientStorage)
	}

	// No ballast left: the answer is 507, never INTERNAL.
	fillDisk(t, fill+"2")
	var full error
	for i := 0; i < 20000 && full == nil; i++ {
		full = update("stopped")
	}
	if !errdefs.Is(full, errdefs.KindDiskFull) || errdefs.CodeOf(full) != wire.CodeInsufficientStorage {
		t.Errorf("write on a full disk without ballast: %v, want %s", full, wire.CodeInsufficientStorage)
	}

	os.Remove(fill)
	os.Remove(fill + "2")
	if err := update("stopped"); err != nil {
		t.Fatalf("write after freeing space: %v", err)
	}
	if _, err := os.Stat(ballast); err != nil {
		t.Errorf("the ballast did not come back: %v", err)
	}
}

// fillDisk writes path until its filesystem is full.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !diskspace.IsNoSpace(err) {
				t.Fatal(err)
			}
			break
		}
	}
	// The last partial blocks too.
	for {
		if _, err := f.Write(buf[:512]); err != nil {
			return
		}
	}
}
