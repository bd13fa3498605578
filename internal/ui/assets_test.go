package ui

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestAssetsAreFresh rebuilds the front end from web/ and compares it with
// the committed, embedded build: a change to web/src without
// scripts/build-ui.sh fails here. The build is deterministic (esbuild
// pinned by web/package-lock.json).
func TestAssetsAreFresh(t *testing.T) {
	web, _ := filepath.Abs("../../web")
	if _, err := os.Stat(filepath.Join(web, "node_modules", "esbuild")); err != nil {
		t.Fatal("web/node_modules is missing: run scripts/npm-install.sh")
	}
	out := t.TempDir()
	cmd := exec.Command("node", filepath.Join(web, "build.mjs"), out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, b)
	}
	built, _ := os.ReadDir(out)
	names := map[string]bool{}
	for _, e := range built {
		names[e.Name()] = true
		want, _ := os.ReadFile(filepath.Join(out, e.Name()))
		got, err := fs.ReadFile(Assets, e.Name())
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("internal/ui/assets/%s is stale against web/: run scripts/build-ui.sh and commit the result", e.Name())
		}
	}
	committed, _ := fs.ReadDir(Assets, ".")
	for _, e := range committed {
		if !names[e.Name()] {
			t.Errorf("internal/ui/assets/%s is no longer built from web/: delete it", e.Name())
		}
	}
}
