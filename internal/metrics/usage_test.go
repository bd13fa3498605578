package metrics

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// A stopped sandbox reads as zeros with its state and its disk; disk is
// what its upper dir's files take.
func TestSamplerReadsDiskAndZerosWithoutInstance(t *testing.T) {
	dir := t.TempDir()
	upper := filepath.Join(dir, "sandboxes", "sbx-test", "upper", "a")
	if err := os.MkdirAll(upper, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(upper, "f"), make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	s := NewSampler(dir)
	sb := &store.Sandbox{ID: "sbx-test", Name: "t", State: wire.StateStopped, Spec: store.Spec{MemoryMiB: 64}}
	st := s.Stats(sb)
	if st.State != wire.StateStopped || st.CPUNanos != 0 || st.MemoryBytes != 0 || st.Pids != 0 || st.CPUPercent != nil {
		t.Errorf("stopped sandbox: %+v", st)
	}
	if st.DiskBytes < 1<<20 {
		t.Errorf("disk: %d bytes, want >= 1 MiB", st.DiskBytes)
	}
	if st = s.Stats(sb); st.CPUPercent == nil {
		t.Error("no CPU percentage on the second read")
	}
}
