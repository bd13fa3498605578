package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// install-service warns when the sbx it installs has no sbx-agent beside it.
func TestInstallServiceWarnsWithoutAgent(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "sbx")
	var errs strings.Builder
	cmd := &cobra.Command{}
	cmd.SetErr(&errs)
	warnNoAgent(cmd, serviceOptions{binary: bin})
	if !strings.Contains(errs.String(), "no sbx-agent next to "+bin) {
		t.Errorf("no warning without sbx-agent: %q", errs.String())
	}
	if err := os.WriteFile(filepath.Join(dir, "sbx-agent"), []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	errs.Reset()
	warnNoAgent(cmd, serviceOptions{binary: bin})
	if errs.Len() != 0 {
		t.Errorf("a warning with sbx-agent in place: %q", errs.String())
	}
}
