package integration

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// doctorResult is one line of sbx doctor -o json.
type doctorResult struct {
	Check, Status, Detail, Fix string
}

// runDoctor runs sbx doctor -o json with env added and returns its results
// and exit code.
func runDoctor(t *testing.T, env []string, args ...string) ([]doctorResult, int) {
	t.Helper()
	cmd := exec.Command(sbxBin, append([]string{"doctor", "-o", "json"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var results []doctorResult
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatalf("doctor -o json: %v: %s (stderr %s)", err, out, stderr.String())
	}
	return results, code
}

// TestDoctorOnThisHost: this host runs the integration tests, so sbx doctor
// finds nothing that fails (a warning, e.g. an unsynchronized clock in a
// container, is allowed and logged).
func TestDoctorOnThisHost(t *testing.T) {
	results, code := runDoctor(t, nil, "--data-dir", t.TempDir(), "--subnet", freeSubnet(t).String())
	if code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
	if len(results) < 10 {
		t.Fatalf("only %d checks: %+v", len(results), results)
	}
	for _, r := range results {
		switch r.Status {
		case "ok":
		case "warn":
			t.Logf("warn %s: %s (fix: %s)", r.Check, r.Detail, r.Fix)
		default:
			t.Errorf("%s %s: %s (fix: %s)", r.Status, r.Check, r.Detail, r.Fix)
		}
	}
}

// TestDoctorWithoutNft runs sbx doctor with a PATH that has every program
// it looks for but nft: it names nft and its package, and exits 1.
func TestDoctorWithoutNft(t *testing.T) {
	bin := t.TempDir()
	for _, p := range []string{"runc", "runsc", "ip", "mkfs.ext4"} {
		path, err := exec.LookPath(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if err := os.Symlink(path, filepath.Join(bin, p)); err != nil {
			t.Fatal(err)
		}
	}
	results, code := runDoctor(t, []string{"PATH=" + bin}, "--data-dir", t.TempDir(), "--subnet", freeSubnet(t).String())
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, r := range results {
		if r.Check == "nft" {
			if r.Status != "fail" || !strings.Contains(r.Detail, "nft is not on PATH") || !strings.Contains(r.Fix, "apt-get install nftables") {
				t.Errorf("nft: %+v; want a fail that says to install nftables", r)
			}
		} else if r.Status == "fail" {
			t.Errorf("%s fails too: %s", r.Check, r.Detail)
		}
	}

	// The text output says the same on one line.
	cmd := exec.Command(sbxBin, "doctor", "--data-dir", t.TempDir(), "--subnet", freeSubnet(t).String())
	cmd.Env = append(os.Environ(), "PATH="+bin)
	out, _ := cmd.Output()
	if !strings.Contains(string(out), "fail   nft") || !strings.Contains(string(out), "apt-get install nftables") {
		t.Errorf("text output lacks the nft line:\n%s", out)
	}
}
