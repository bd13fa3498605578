package runtime

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunscDropsConnections(t *testing.T) {
	// A stand-in for a newer runsc, whose flags list -net-disconnect-ok.
	newer := filepath.Join(t.TempDir(), "runsc")
	script := "#!/bin/sh\n[ \"$1\" = flags ] && echo '  -net-disconnect-ok'\n"
	if err := os.WriteFile(newer, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if !dropsConnections(newer) {
		t.Error("a runsc with -net-disconnect-ok does not drop connections")
	}
	// Debian 12's runsc (20221219) has no such flag.
	if bin, err := exec.LookPath("runsc"); err == nil {
		out, _ := exec.Command(bin, "--version").Output()
		if strings.Contains(string(out), "20221219") && dropsConnections(bin) {
			t.Error("Debian's runsc 20221219 is taken to drop connections")
		}
	}
}
