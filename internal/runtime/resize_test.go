package runtime

import (
	"slices"
	"testing"
)

func TestUpdateArgs(t *testing.T) {
	got := updateArgs(Resources{CPU: 1.5, MemoryMiB: 256, PidsLimit: 64}, true)
	want := []string{"--cpu-period", "100000", "--cpu-quota", "150000", "--memory", "268435456", "--memory-swap", "268435456", "--pids-limit", "64"}
	if !slices.Equal(got, want) {
		t.Errorf("updateArgs = %q, want %q", got, want)
	}
	if got := updateArgs(Resources{MemoryMiB: 32}, false); !slices.Equal(got, []string{"--memory", "33554432"}) {
		t.Errorf("without swap accounting: %q", got)
	}
	if got := updateArgs(Resources{}, true); len(got) != 0 {
		t.Errorf("nothing to change: %q", got)
	}
}
