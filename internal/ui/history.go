package ui

import (
	"context"
	"github.com/sbxhq/sbx/internal/auth"
	"log/slog"
	"sync"
	"time"

	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// UsageReader reads a sandbox's cgroup: its cumulative CPU time, and its
// memory in use now (without reclaimable cache).
type UsageReader struct {
	CPUNanos    func(id string) uint64
	MemoryBytes func(id string) uint64
}

// cgroupUsage reads the sandboxes' cgroups.
var cgroupUsage = UsageReader{CPUNanos: runtime.CgroupCPUNanos, MemoryBytes: runtime.CgroupMemoryBytes}

// memoryEvery is how many rounds a sandbox that used no CPU keeps its last
// memory reading: the memory of an idle sandbox can only shrink (its cache
// reclaimed), and reading memory.stat of every idle sandbox each round was
// most of an idle daemon's CPU (docs/performance.md).
const memoryEvery = 6

// History keeps each running sandbox's CPU and memory over the last window
// in memory, one sample every `every`: the dashboard's charts. No database:
// a restart starts the charts afresh.
//
// Cost: per round one store query for the started sandboxes and, for each,
// one cgroup file read (its CPU time), plus its memory files when it used
// CPU since the last round or every memoryEvery rounds (no disk walk). Per
// sandbox at most window/every samples (360 at the defaults), kept as runs
// of equal samples: an idle sandbox's hour is one or a few runs of 20 bytes
// where a ring of every sample was 4 KiB, most of the dashboard's memory on
// a host of idle sandboxes (docs/performance.md).
// A sandbox not started for a whole window is forgotten.
type History struct {
	sandboxes Sandboxes
	read      UsageReader
	every     time.Duration
	size      int // samples kept per sandbox

	mu    sync.Mutex
	rings map[string]*ring
}

// Sample is one point of a chart.
type Sample struct {
	Time        int64   `json:"t"`   // Unix seconds
	CPUPercent  float32 `json:"cpu"` // since the previous sample (100 = one core)
	MemoryBytes uint64  `json:"mem"`
}

// run is a run of equal samples taken at a steady step, as stored: n
// samples from first to last (Unix seconds, good until 2106), every
// (last-first)/(n-1) seconds.
type run struct {
	first, last uint32
	n           uint32
	cpu         float32
	memKiB      uint32
}

// step is the seconds between the run's samples (0 for a single sample).
func (r run) step() uint32 {
	if r.n < 2 {
		return 0
	}
	return (r.last - r.first) / (r.n - 1)
}

type ring struct {
	runs     []run  // oldest first
	samples  int    // in all runs
	lastCPU  uint64 // cumulative CPU time at the last sample
	lastAt   time.Time
	lastSeen time.Time
	lastMem  uint64 // memory at the last sample
	memAge   int    // rounds since memory was last read
}

// NewHistory returns a history over sandboxes; a zero read reads the
// cgroups, every <= 0 is 10 s, window <= 0 is one hour.
func NewHistory(sandboxes Sandboxes, read UsageReader, every, window time.Duration) *History {
	if read.CPUNanos == nil {
		read = cgroupUsage
	}
	if every <= 0 {
		every = 10 * time.Second
	}
	if window <= 0 {
		window = time.Hour
	}
	return &History{sandboxes: sandboxes, read: read, every: every, size: max(int(window/every), 2), rings: map[string]*ring{}}
}

// Run samples every `every` until ctx ends.
func (h *History) Run(ctx context.Context) {
	t := time.NewTicker(h.every)
	defer t.Stop()
	for {
		h.SampleOnce(ctx, time.Now())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// SampleOnce takes one sample of every started sandbox at now.
func (h *History) SampleOnce(ctx context.Context, now time.Time) {
	// The sampler is the daemon's own work: it samples every team's
	// sandboxes; each answer is filtered by the asker's team.
	list, err := h.sandboxes.List(auth.System(ctx, "dashboard stats sampler"), store.Filter{State: string(wire.StateStarted)})
	if err != nil {
		if ctx.Err() == nil {
			slog.Warn("dashboard stats: list sandboxes", "err", err)
		}
		return
	}
	// The file reads, outside the lock: the CPU time of each, and the
	// memory of those that used CPU (or whose reading is old).
	cpus := make([]uint64, len(list))
	for i, sb := range list {
		cpus[i] = h.read.CPUNanos(sb.ID)
	}
	h.mu.Lock()
	stale := make([]bool, len(list))
	for i, sb := range list {
		r := h.rings[sb.ID]
		stale[i] = r == nil || r.lastCPU != cpus[i] || r.memAge+1 >= memoryEvery
	}
	h.mu.Unlock()
	mems := make([]uint64, len(list))
	for i, sb := range list {
		if stale[i] {
			mems[i] = h.read.MemoryBytes(sb.ID)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, sb := range list {
		r := h.rings[sb.ID]
		if r == nil {
			r = &ring{}
			h.rings[sb.ID] = r
		}
		mem := r.lastMem
		r.memAge++
		if stale[i] {
			mem, r.memAge = mems[i], 0
		}
		r.add(now, cpus[i], mem, h.size)
	}
	window := time.Duration(h.size) * h.every
	for id, r := range h.rings {
		if now.Sub(r.lastSeen) > window {
			delete(h.rings, id)
		}
	}
}

func (r *ring) add(now time.Time, cpuNanos, mem uint64, size int) {
	var pct float32
	// The first sample of an instance, or one after a restart (its CPU
	// time starts again at 0), has no rate yet.
	if !r.lastAt.IsZero() && cpuNanos >= r.lastCPU && now.After(r.lastAt) && now.Sub(r.lastSeen) < 3*time.Minute {
		pct = float32(float64(cpuNanos-r.lastCPU) / float64(now.Sub(r.lastAt).Nanoseconds()) * 100)
	}
	t, memKiB := uint32(now.Unix()), uint32(min(mem>>10, 1<<32-1))
	// The sample extends the last run if it is equal and at the run's step
	// (so every sample's time is kept exactly); else it starts a run.
	if n := len(r.runs); n > 0 {
		last := &r.runs[n-1]
		if last.cpu == pct && last.memKiB == memKiB && t > last.last && (last.n == 1 || t-last.last == last.step()) {
			last.last, last.n = t, last.n+1
		} else {
			r.runs = append(r.runs, run{first: t, last: t, n: 1, cpu: pct, memKiB: memKiB})
		}
	} else {
		r.runs = append(r.runs, run{first: t, last: t, n: 1, cpu: pct, memKiB: memKiB})
	}
	if r.samples++; r.samples > size { // drop the oldest sample
		if oldest := &r.runs[0]; oldest.n > 1 {
			oldest.first += oldest.step()
			oldest.n--
		} else {
			r.runs = r.runs[1:]
		}
		r.samples--
	}
	r.lastCPU, r.lastAt, r.lastSeen, r.lastMem = cpuNanos, now, now, mem
}

// Samples returns id's samples, oldest first (none: nil).
func (h *History) Samples(id string) []Sample {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.rings[id]
	if r == nil {
		return nil
	}
	out := make([]Sample, 0, r.samples)
	for _, run := range r.runs {
		for i := range run.n {
			out = append(out, Sample{Time: int64(run.first + i*run.step()), CPUPercent: run.cpu, MemoryBytes: uint64(run.memKiB) << 10})
		}
	}
	return out
}

// Latest returns id's newest sample.
func (h *History) Latest(id string) (Sample, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.rings[id]
	if r == nil || len(r.runs) == 0 {
		return Sample{}, false
	}
	last := r.runs[len(r.runs)-1]
	return Sample{Time: int64(last.last), CPUPercent: last.cpu, MemoryBytes: uint64(last.memKiB) << 10}, true
}

// Every is the sampling interval.
func (h *History) Every() time.Duration { return h.every }
