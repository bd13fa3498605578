package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/store"
)

type listed []*store.Sandbox

func (l *listed) List(context.Context, store.Filter) ([]*store.Sandbox, error) { return *l, nil }
func (l *listed) Get(context.Context, string) (*store.Sandbox, error)          { return nil, nil }

func TestHistoryRingAndRate(t *testing.T) {
	sbs := &listed{{ID: "s1", State: "started"}}
	cpu := uint64(0)
	h := NewHistory(sbs, UsageReader{CPUNanos: func(string) uint64 { return cpu }, MemoryBytes: func(string) uint64 { return 64 << 20 }}, 10*time.Second, time.Minute)
	start := time.Unix(1_700_000_000, 0)
	for i := range 10 {
		h.SampleOnce(context.Background(), start.Add(time.Duration(i)*10*time.Second))
		cpu += uint64(5 * time.Second) // half a core
	}
	got := h.Samples("s1")
	if len(got) != 6 { // a minute of 10 s samples
		t.Fatalf("%d samples, want 6", len(got))
	}
	for i, s := range got {
		if want := start.Add(time.Duration(4+i) * 10 * time.Second).Unix(); s.Time != want {
			t.Fatalf("sample %d at %d, want %d (oldest first)", i, s.Time, want)
		}
		if s.CPUPercent < 49.9 || s.CPUPercent > 50.1 || s.MemoryBytes != 64<<20 {
			t.Fatalf("sample %d: %+v", i, s)
		}
	}
	// Gone from the started list: kept for a window, then forgotten.
	*sbs = nil
	h.SampleOnce(context.Background(), start.Add(100*time.Second))
	if h.Samples("s1") == nil {
		t.Fatal("a just-stopped sandbox's history is gone")
	}
	h.SampleOnce(context.Background(), start.Add(200*time.Second))
	if h.Samples("s1") != nil {
		t.Fatal("a sandbox stopped for a whole window is still kept")
	}
}

// fixedUsage reads every sandbox as using cpu and mem.
func fixedUsage(cpu, mem uint64) UsageReader {
	return UsageReader{CPUNanos: func(string) uint64 { return cpu }, MemoryBytes: func(string) uint64 { return mem }}
}

// An idle sandbox (no CPU used since the last round) keeps its memory
// reading for memoryEvery rounds; a busy one is read every round.
func TestHistoryReadsMemoryOfBusySandboxes(t *testing.T) {
	sbs := &listed{{ID: "idle", State: "started"}, {ID: "busy", State: "started"}}
	cpu := map[string]uint64{"idle": 7, "busy": 0}
	memReads := map[string]int{}
	mem := uint64(1 << 20)
	h := NewHistory(sbs, UsageReader{
		CPUNanos:    func(id string) uint64 { return cpu[id] },
		MemoryBytes: func(id string) uint64 { memReads[id]++; return mem },
	}, 10*time.Second, time.Hour)
	start := time.Unix(1_700_000_000, 0)
	rounds := 2 * memoryEvery
	for i := range rounds {
		if i == 1 {
			mem = 2 << 20 // both grow once; only the busy one shows it before its reading is old
		}
		h.SampleOnce(context.Background(), start.Add(time.Duration(i)*10*time.Second))
		cpu["busy"] += uint64(time.Second)
	}
	if memReads["busy"] != rounds || memReads["idle"] != 2 {
		t.Fatalf("memory reads %v over %d rounds; want busy %d, idle 2 (the first round and after %d rounds)", memReads, rounds, rounds, memoryEvery)
	}
	idle, busy := h.Samples("idle"), h.Samples("busy")
	if idle[1].MemoryBytes != 1<<20 || idle[memoryEvery].MemoryBytes != 2<<20 || busy[1].MemoryBytes != 2<<20 {
		t.Fatalf("idle %+v busy %+v", idle, busy)
	}
}

// BenchmarkSampleRound is one sampling round's bookkeeping over 1000
// started sandboxes (the cgroup reads are BenchmarkCgroupRead).
func BenchmarkSampleRound(b *testing.B) {
	var sbs listed
	for i := range 1000 {
		sbs = append(sbs, &store.Sandbox{ID: fmt.Sprintf("sbx-%d", i), State: "started"})
	}
	h := NewHistory(&sbs, fixedUsage(1, 1), 10*time.Second, time.Hour)
	now := time.Unix(1_700_000_000, 0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		h.SampleOnce(context.Background(), now.Add(time.Duration(i)*10*time.Second))
	}
}

// BenchmarkCgroupRead is the file reads of one sandbox's sample: the files
// runtime.ReadCgroupStats reads (cgroup v1), of this host's root cgroup,
// whose memory.stat is no shorter than a sandbox's.
func BenchmarkCgroupRead(b *testing.B) {
	files := []string{"cpuacct/cpuacct.usage", "memory/memory.usage_in_bytes", "memory/memory.stat", "memory/memory.limit_in_bytes", "pids/pids.current", "pids/pids.max"}
	for _, f := range files[:3] {
		if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", f)); err != nil {
			b.Skip("no cgroup v1 here:", err)
		}
	}
	for b.Loop() {
		for _, f := range files {
			os.ReadFile(filepath.Join("/sys/fs/cgroup", f))
		}
	}
}

// An idle sandbox's hour of equal samples is kept as one run, not a ring
// of 360 (4 KiB each, most of the dashboard's memory with 1,000 idle
// sandboxes); every sample still reads back with its own time, also when a
// tick comes late.
func TestHistoryKeepsEqualSamplesAsRuns(t *testing.T) {
	sbs := &listed{{ID: "s1", State: "started"}}
	h := NewHistory(sbs, fixedUsage(7, 64<<20), 10*time.Second, time.Hour)
	start := time.Unix(1_700_000_000, 0)
	var want []int64
	at := start
	for i := range 400 {
		if i == 200 {
			at = at.Add(3 * time.Second) // a late tick: the step changes
		}
		h.SampleOnce(context.Background(), at)
		want = append(want, at.Unix())
		at = at.Add(10 * time.Second)
	}
	want = want[len(want)-360:]
	if n := len(h.rings["s1"].runs); n > 3 {
		t.Errorf("%d runs for an idle sandbox's hour", n)
	}
	got := h.Samples("s1")
	if len(got) != len(want) {
		t.Fatalf("%d samples, want %d", len(got), len(want))
	}
	for i, s := range got {
		if s.Time != want[i] || s.MemoryBytes != 64<<20 || s.CPUPercent != 0 {
			t.Fatalf("sample %d: %+v, want time %d", i, s, want[i])
		}
	}
	if last, _ := h.Latest("s1"); last.Time != want[len(want)-1] {
		t.Fatalf("latest %+v, want time %d", last, want[len(want)-1])
	}
}
