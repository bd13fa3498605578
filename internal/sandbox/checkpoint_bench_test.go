package sandbox

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
)

// The cost of a checkpoint (docs/kubernetes/lifecycle.md): an upper
// directory of 2,000 source-like files (16 MiB) and one 32 MiB file of
// random bytes, saved after one file changed (changed) or found unchanged
// (unchanged), to a blob store on local disk. Reports the time the
// sandbox is frozen, the bytes written and the CPU time per checkpoint;
// the freezer is a fake (runc's pause and resume add their own time,
// measured separately in the doc).
//
//	go test -run '^$' -bench Checkpoint -benchtime 10x ./internal/sandbox
func BenchmarkCheckpoint(b *testing.B) {
	const id = "sbx-cccccccccccccccc"
	m, _, _ := checkpointManager(b, id)
	ctx := auth.System(context.Background(), "bench")
	upper := m.dirsOf(id).upper
	text := strings.Repeat("func f(x int) int { return x*x + 1 } // some source text\n", 140) // ~8 KiB
	for i := range 2000 {
		dir := filepath.Join(upper, "src", fmt.Sprint(i/100))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.go", i)), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	random := make([]byte, 32<<20)
	rand.Read(random)
	if err := os.WriteFile(filepath.Join(upper, "blob.bin"), random, 0o644); err != nil {
		b.Fatal(err)
	}
	if _, err := m.Claim(ctx, id, "pod"); err != nil {
		b.Fatal(err)
	}
	first, err := m.Checkpoint(ctx, id, "owner", "pod", "")
	if err != nil {
		b.Fatal(err)
	}
	fp := first.Fingerprint
	run := func(b *testing.B, change bool) {
		var frozen time.Duration
		var bytes int64
		cpu0 := cpuTime()
		for i := 0; i < b.N; i++ {
			if change {
				if err := os.WriteFile(filepath.Join(upper, "src", "0", "f0.go"), []byte(fmt.Sprint(text, i)), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			res, err := m.Checkpoint(ctx, id, "owner", "pod", fp)
			if err != nil || res.Unchanged == change {
				b.Fatalf("checkpoint: %+v %v", res, err)
			}
			fp = res.Fingerprint
			frozen += res.Frozen
			bytes += res.Bytes
		}
		b.ReportMetric(float64(frozen.Microseconds())/1e3/float64(b.N), "ms-frozen/op")
		b.ReportMetric(float64(bytes)/float64(b.N), "bytes/op")
		b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1e3/float64(b.N), "ms-cpu/op")
	}
	b.Run("changed", func(b *testing.B) { run(b, true) })
	b.Run("unchanged", func(b *testing.B) { run(b, false) })
}

// cpuTime is this process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
