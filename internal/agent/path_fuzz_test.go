package agent

import (
	"path/filepath"
	"strings"
	"testing"
)

// FuzzPath checks the agent's path resolution: any accepted path comes out
// absolute and clean, with no ".." left and no NUL byte, and an absolute input
// means what filepath.Clean says it means. (Containment itself comes from the
// agent running inside the instance's root; this pins down the lexical part.)
//
//	go test -run '^$' -fuzz '^FuzzPath$' -fuzztime 1m ./internal/agent/
func FuzzPath(f *testing.F) {
	for _, p := range []string{
		"f.txt", "/workspace/a", "../../../../etc/passwd", "/../../x", "a/../../b",
		"./.", "/", "", "\x00", "a\x00b", "//a//b/", "..", "/proc/self/root/etc",
		strings.Repeat("../", 200) + "x", "a/b/../../../../c", "\\..\\..", "…/..",
	} {
		f.Add("/workspace", p)
	}
	f.Add("/", "..")
	f.Add("/deep/cwd/here", "../../../..")
	f.Fuzz(func(t *testing.T, cwd, p string) {
		if !filepath.IsAbs(cwd) || strings.ContainsRune(cwd, 0) {
			return // the agent refuses to start with such a working directory
		}
		s := &server{cwd: filepath.Clean(cwd)}
		got, err := s.path(p)
		if p == "" || strings.ContainsRune(p, 0) {
			if err == nil {
				t.Fatalf("path(%q) = %q, want an error", p, got)
			}
			return
		}
		if err != nil {
			t.Fatalf("path(%q): %v", p, err)
		}
		if !filepath.IsAbs(got) || filepath.Clean(got) != got || strings.ContainsRune(got, 0) {
			t.Fatalf("path(%q) = %q: not a clean absolute path", p, got)
		}
		for _, c := range strings.Split(got, "/") {
			if c == ".." {
				t.Fatalf("path(%q) = %q keeps a \"..\"", p, got)
			}
		}
		if filepath.IsAbs(p) && got != filepath.Clean(p) {
			t.Fatalf("path(%q) = %q, want %q", p, got, filepath.Clean(p))
		}
		if !filepath.IsAbs(p) && !strings.HasPrefix(got, "/") {
			t.Fatalf("relative path(%q) = %q", p, got)
		}
	})
}
