package runtime

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
)

// TestFindRunsc: sbx's own runsc first; Debian's on PATH as the fallback
// (which the daemon warns about); neither is a clear Unavailable.
func TestFindRunsc(t *testing.T) {
	dir := t.TempDir()
	bundled := filepath.Join(dir, "lib", "runsc")
	onPath := filepath.Join(dir, "bin", "runsc")
	for _, p := range []string{bundled, onPath} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", filepath.Dir(onPath))

	if p, fallback, err := findRunsc(bundled); err != nil || p != bundled || fallback {
		t.Errorf("with both: %q fallback %v err %v, want %s", p, fallback, err, bundled)
	}
	os.Remove(bundled)
	if p, fallback, err := findRunsc(bundled); err != nil || p != onPath || !fallback {
		t.Errorf("without sbx's own: %q fallback %v err %v, want %s as fallback", p, fallback, err, onPath)
	}
	os.Remove(onPath)
	_, _, err := findRunsc(bundled)
	if !errdefs.Is(err, errdefs.KindUnavailable) || !strings.Contains(err.Error(), "scripts/setup.sh") {
		t.Errorf("with neither: %v, want Unavailable naming scripts/setup.sh", err)
	}
}

// TestOwnRunsc: setup.sh's install wins over the package's; the package's
// is used when it is the only one; with neither, setup.sh's path is named.
func TestOwnRunsc(t *testing.T) {
	dir := t.TempDir()
	bundled, packaged := filepath.Join(dir, "local", "runsc"), filepath.Join(dir, "usr", "runsc")
	if got := ownRunsc(bundled, packaged); got != bundled {
		t.Errorf("with neither: %s, want %s", got, bundled)
	}
	for _, p := range []string{packaged, bundled} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if got := ownRunsc(bundled, packaged); got != p {
			t.Errorf("with %s installed: %s", p, got)
		}
	}
}
