package runtime

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestProbeRunsc(t *testing.T) {
	// A stand-in for a newer runsc, whose flags list -net-disconnect-ok
	// and the systrap platform.
	newer := filepath.Join(t.TempDir(), "runsc")
	script := "#!/bin/sh\n[ \"$1\" = flags ] && echo '  -net-disconnect-ok' && echo 'specifies which platform to use: systrap (default), ptrace, kvm.'\n"
	if err := os.WriteFile(newer, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if f := probeRunsc(newer); !f.dropsConnections || !f.systrap {
		t.Errorf("a runsc with -net-disconnect-ok and systrap probes as %+v", f)
	}
	// Debian 12's runsc (20221219) has neither.
	if bin, err := exec.LookPath("runsc"); err == nil {
		out, _ := exec.Command(bin, "--version").Output()
		if f := probeRunsc(bin); strings.Contains(string(out), "20221219") && (f.dropsConnections || f.systrap) {
			t.Errorf("Debian's runsc 20221219 probes as %+v", f)
		}
	}
}
