package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// sdkDir is a directory under sdks/ of the repository.
func sdkDir(t *testing.T, name string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "sdks", name))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// sdkEnv is the environment of an SDK's test suite: the daemon it talks to
// and the name of the imported python image.
func sdkEnv(d *daemon) []string {
	return append(os.Environ(), "SBX_HOST=http://"+d.addr, "SBX_TOKEN="+d.token, "SBX_TEST_PYTHON_IMAGE=python")
}

// runSuite runs an SDK's own test suite and fails with its output.
func runSuite(t *testing.T, dir string, env []string, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("%s %v in %s:\n%s", name, args, time.Since(start).Round(time.Millisecond), out)
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
}

// TestTypeScriptSDK builds sdks/typescript (tsc) and runs its node:test
// suite against a real daemon with the python image.
func TestTypeScriptSDK(t *testing.T) {
	dir := sdkDir(t, "typescript")
	tsc := filepath.Join(dir, "node_modules", ".bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		t.Fatalf("%s is missing: run scripts/npm-install.sh", tsc)
	}
	runSuite(t, dir, os.Environ(), tsc, "-p", "tsconfig.json")
	d := startDaemon(t)
	importPython(t, d)
	runSuite(t, dir, sdkEnv(d), "node", "--test", "--test-reporter=spec", "test/")
}
