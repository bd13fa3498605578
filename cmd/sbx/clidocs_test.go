package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// The CLI reference of the documentation site, one page per command, is
// generated from the commands' own help by cobra's doc package. Regenerate
// it after changing a command, a flag or a help text:
//
//go:generate env SBX_UPDATE_CLIDOCS=1 go test -count=1 -run ^TestCLIDocs$ .

// cliDocsDir is the generated reference, relative to this package.
const cliDocsDir = "../../docs/cli"

// genCLIDocs writes the reference of every visible command into dir.
func genCLIDocs(t *testing.T, dir string) {
	t.Helper()
	root := newRootCmd()
	var stamp func(*cobra.Command)
	stamp = func(c *cobra.Command) {
		c.DisableAutoGenTag = true // no date: the pages must not change when nothing else does
		for _, sub := range c.Commands() {
			stamp(sub)
		}
	}
	stamp(root)
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		t.Fatal(err)
	}
}

// TestCLIDocs fails when docs/cli differs from what the commands' help says
// now: a page missing, extra or out of date.
func TestCLIDocs(t *testing.T) {
	fresh := t.TempDir()
	genCLIDocs(t, fresh)
	if os.Getenv("SBX_UPDATE_CLIDOCS") == "1" {
		old, _ := filepath.Glob(filepath.Join(cliDocsDir, "*.md"))
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.MkdirAll(cliDocsDir, 0o755); err != nil {
			t.Fatal(err)
		}
		pages, _ := filepath.Glob(filepath.Join(fresh, "*.md"))
		for _, p := range pages {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(cliDocsDir, filepath.Base(p)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	if stale := diffDirs(t, fresh, cliDocsDir); len(stale) > 0 {
		t.Fatalf("docs/cli is stale (%s); regenerate it: go generate ./cmd/sbx", strings.Join(stale, ", "))
	}
}

// diffDirs names the .md files that differ between want and got, or are in
// only one of them.
func diffDirs(t *testing.T, want, got string) []string {
	t.Helper()
	read := func(dir string) map[string][]byte {
		files, _ := filepath.Glob(filepath.Join(dir, "*.md"))
		m := map[string][]byte{}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			m[filepath.Base(f)] = b
		}
		return m
	}
	w, g := read(want), read(got)
	var out []string
	for name, b := range w {
		switch gb, ok := g[name]; {
		case !ok:
			out = append(out, name+" missing")
		case !bytes.Equal(b, gb):
			out = append(out, name+" out of date")
		}
	}
	for name := range g {
		if _, ok := w[name]; !ok {
			out = append(out, name+" is no command's")
		}
	}
	return out
}
