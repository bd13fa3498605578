package integration

import (
	"os"
	"testing"
)

// TestPythonSDK runs sdks/python's pytest suite with Debian's python3 and
// its packages (python3-httpx, python3-websockets, python3-pytest; see
// scripts/setup-tests.sh) against a real daemon with the python image:
// /usr/bin/python3, so that another python3 on PATH (pyenv, a venv)
// without those packages is not picked.
func TestPythonSDK(t *testing.T) {
	dir := sdkDir(t, "python")
	d := startDaemon(t)
	importPython(t, d)
	python := "python3"
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		python = "/usr/bin/python3"
	}
	env := append(sdkEnv(d), "PYTHONDONTWRITEBYTECODE=1")
	runSuite(t, dir, env, python, "-m", "pytest", "-v", "-p", "no:cacheprovider", "tests")
}
