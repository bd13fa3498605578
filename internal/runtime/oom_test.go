package runtime

import (
	"os"
	"path/filepath"
	"testing"
)

func TestOOMKills(t *testing.T) {
	dir := t.TempDir()
	v1 := filepath.Join(dir, "memory.oom_control")
	os.WriteFile(v1, []byte("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n"), 0o600)
	v2 := filepath.Join(dir, "memory.events")
	os.WriteFile(v2, []byte("low 0\nhigh 0\nmax 4\noom 1\noom_kill 0\noom_group_kill 0\n"), 0o600)
	if n := oomKills(v1); n != 2 {
		t.Errorf("v1: %d, want 2", n)
	}
	if n := oomKills(v2); n != 0 {
		t.Errorf("v2: %d, want 0", n)
	}
	if n := oomKills(filepath.Join(dir, "missing")); n != 0 {
		t.Errorf("missing: %d", n)
	}
	if OOMKilled("sbx-never-existed") {
		t.Error("OOMKilled of a missing instance")
	}
}
