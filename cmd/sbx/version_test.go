package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestVersion: sbx version, its JSON, and sbx --version print the same
// facts; a PATH without runc says "not found".
func TestVersion(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	r := runCLI(t, "", "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "sbx ") || !strings.Contains(r.stdout, "\ngo: go1.") ||
		!strings.Contains(r.stdout, "\nrunc: not found\n") || !strings.Contains(r.stdout, "\nrunsc: not found\n") {
		t.Errorf("sbx version: %+v", r)
	}
	if flag := runCLI(t, "", "--version"); flag.code != 0 || flag.stdout != r.stdout {
		t.Errorf("sbx --version = %+v, want the same as sbx version (%q)", flag, r.stdout)
	}
	j := runCLI(t, "", "version", "-o", "json")
	var v struct{ Version, Go, Runc, Runsc string }
	if err := json.Unmarshal([]byte(j.stdout), &v); err != nil || j.code != 0 || v.Version == "" || v.Runc != "not found" || !strings.HasPrefix(v.Go, "go1.") {
		t.Errorf("sbx version -o json: %+v (%v): %+v", j, err, v)
	}
}

func TestDoctorRejectsBadFlags(t *testing.T) {
	if r := runCLI(t, "", "doctor", "-o", "yaml"); r.code != 1 || !strings.Contains(r.stderr, "unknown output format") {
		t.Errorf("doctor -o yaml: %+v", r)
	}
	if r := runCLI(t, "", "doctor", "--disk-reserve-mib", "-1"); r.code != 1 || !strings.Contains(r.stderr, "--disk-reserve-mib") {
		t.Errorf("doctor --disk-reserve-mib -1: %+v", r)
	}
}
