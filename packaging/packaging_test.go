package packaging

import (
	"strings"
	"testing"

	"github.com/coreos/go-systemd/v22/unit"
)

// unitValues parses a unit and returns each section.key's values in order.
func unitValues(t *testing.T, text string) map[string][]string {
	t.Helper()
	opts, err := unit.DeserializeOptions(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parse the unit: %v", err)
	}
	values := map[string][]string{}
	for _, o := range opts {
		k := o.Section + "." + o.Name
		values[k] = append(values[k], o.Value)
	}
	return values
}

// TestSystemdUnitKeepsSandboxesAlive checks the settings that make the
// shipped unit right for sbx: above all KillMode=process, so that
// systemctl stop signals sbx serve and nothing else (the instances live
// outside the unit's cgroup: integration's TestServiceStopLeavesSandboxesRunning).
func TestSystemdUnitKeepsSandboxesAlive(t *testing.T) {
	v := unitValues(t, SystemdUnit)
	want := map[string]string{
		"Unit.After":              "network-online.target",
		"Unit.Wants":              "network-online.target",
		"Service.Type":            "simple",
		"Service.KillMode":        "process",
		"Service.Restart":         "on-failure",
		"Service.Delegate":        "yes",
		"Service.LimitNOFILE":     "1048576",
		"Service.TasksMax":        "infinity",
		"Service.EnvironmentFile": "-/etc/sbx/sbx.env",
		"Service.ExecStart":       "/usr/local/bin/sbx serve",
		"Install.WantedBy":        "multi-user.target",
	}
	for key, value := range want {
		if got := v[key]; len(got) != 1 || got[0] != value {
			t.Errorf("%s = %q, want exactly %q", key, got, value)
		}
	}
}
