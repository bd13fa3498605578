package integration

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPythonSDKPackage builds sdks/python's wheel as a packager would, with
// Debian's pip, setuptools and wheel and no network (pip wheel
// --no-build-isolation --no-deps), installs it alone into an empty
// directory, checks what it ships, and runs the README's quickstart,
// copied from it, against a real daemon from that directory.
func TestPythonSDKPackage(t *testing.T) {
	src := sdkDir(t, "python")
	tmp := t.TempDir()
	// A copy, so the build's egg-info stays out of the tree; reading the
	// files follows the LICENSE link.
	err := filepath.WalkDir(src, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(tmp, "src", filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(tmp, "src", rel), b, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
	python := "/usr/bin/python3" // Debian's, with python3-pip and python3-setuptools
	env := append(os.Environ(), "PIP_NO_INDEX=1", "PIP_DISABLE_PIP_VERSION_CHECK=1", "PYTHONDONTWRITEBYTECODE=1")
	runSuite(t, tmp, env, python, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-w", "dist", "./src")
	wheels, _ := filepath.Glob(filepath.Join(tmp, "dist", "sbxhq-*-py3-none-any.whl"))
	if len(wheels) != 1 {
		t.Fatalf("wheels built: %v", wheels)
	}
	site := filepath.Join(tmp, "site")
	runSuite(t, tmp, env, python, "-m", "pip", "install", "--no-deps", "--target", site, wheels[0])

	if _, err := os.Stat(filepath.Join(site, "sbx", "py.typed")); err != nil {
		t.Errorf("the wheel does not ship py.typed: %v", err)
	}
	meta, err := os.ReadFile(filepath.Join(site, strings.TrimSuffix(filepath.Base(wheels[0]), "-py3-none-any.whl")+".dist-info", "METADATA"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Name: sbxhq", "License: Apache-2.0", "Project-URL: Homepage, https://github.com/sbxhq/sbx",
		"Project-URL: Repository, https://github.com/sbxhq/sbx", "## Quickstart"} {
		if !strings.Contains(string(meta), want) {
			t.Errorf("METADATA lacks %q", want)
		}
	}
	if lic, _ := filepath.Glob(filepath.Join(site, "sbxhq-*.dist-info", "LICENSE")); len(lic) != 1 {
		t.Errorf("the wheel ships no LICENSE")
	}

	readme, err := os.ReadFile(filepath.Join(src, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	quickstart := firstCodeBlock(t, string(readme), "## Quickstart", "```python\n")
	qs := filepath.Join(tmp, "quickstart.py")
	if err := os.WriteFile(qs, []byte(quickstart), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t)
	// Only the installed package is on the path: not the source tree.
	cmd := exec.Command(python, "-c", "import sbx, runpy; print(sbx.__file__); runpy.run_path('quickstart.py')")
	cmd.Dir = tmp
	cmd.Env = append(sdkEnv(d), "PYTHONPATH="+site, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("quickstart: %v\n%s", err, out)
	}
	if want := filepath.Join(site, "sbx", "__init__.py") + "\n0 42\n\nhi\n"; string(out) != want {
		t.Errorf("quickstart printed %q, want %q", out, want)
	}
}

// firstCodeBlock returns the first fenced block opened by fence after the
// heading in a Markdown text.
func firstCodeBlock(t *testing.T, md, heading, fence string) string {
	t.Helper()
	_, after, ok := strings.Cut(md, heading)
	if !ok {
		t.Fatalf("no %q in the README", heading)
	}
	_, block, ok := strings.Cut(after, fence)
	if !ok {
		t.Fatalf("no %q block after %q", fence, heading)
	}
	block, _, _ = strings.Cut(block, "```")
	return block
}
