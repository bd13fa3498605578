package main

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/internal/daemon"
)

// TestDefaultDiskFlag: sandboxes get a 10 GiB disk unless the flag or
// SBX_DEFAULT_DISK_MIB says otherwise; 0 turns it off; a size a create
// could not ask for is refused, naming the flag.
func TestDefaultDiskFlag(t *testing.T) {
	apply := func(env string, args ...string) (int, error) {
		t.Helper()
		t.Setenv("SBX_DEFAULT_DISK_MIB", env)
		cmd := &cobra.Command{Use: "serve"}
		var f diskFlags
		f.register(cmd)
		if err := cmd.ParseFlags(args); err != nil {
			t.Fatal(err)
		}
		var cfg daemon.Config
		err := f.apply(cmd, &cfg)
		return cfg.DefaultDiskMiB, err
	}
	for _, c := range []struct {
		env  string
		args []string
		want int
	}{{"", nil, 10240}, {"", []string{"--default-disk-mib", "0"}, 0}, {"64", nil, 64}, {"64", []string{"--default-disk-mib", "32"}, 32}} {
		if got, err := apply(c.env, c.args...); err != nil || got != c.want {
			t.Errorf("env %q, args %v: %d, %v; want %d", c.env, c.args, got, err, c.want)
		}
	}
	for _, bad := range []string{"8", "-1", "2000000"} {
		if _, err := apply("", "--default-disk-mib", bad); err == nil {
			t.Errorf("--default-disk-mib %s accepted", bad)
		}
	}
}
