package metrics

import (
	"io/fs"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/sbxhq/sbx/internal/network"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// diskEvery is how long a measured disk size is reused: walking a large
// upper dir at every scrape and every `sbx stats` refresh would cost more
// than the number is worth.
const diskEvery = 10 * time.Second

// forgetAfter drops what the Sampler remembers of a sandbox nobody asked
// about for this long (deleted ones, mostly).
const forgetAfter = 5 * time.Minute

// Sampler reads what sandboxes use: CPU, memory and pids from their
// cgroups, disk from their upper dir or disk image, network from their
// veth. It only reads; a sandbox without an instance reads as zeros.
type Sampler struct {
	dataDir string

	mu   sync.Mutex
	prev map[string]cpuSample // the last CPU reading, for a percentage
	disk map[string]diskSample
}

type cpuSample struct {
	nanos uint64
	at    time.Time
}

type diskSample struct {
	bytes uint64
	at    time.Time
}

// NewSampler reads sandboxes under dataDir/sandboxes.
func NewSampler(dataDir string) *Sampler {
	return &Sampler{dataDir: dataDir, prev: map[string]cpuSample{}, disk: map[string]diskSample{}}
}

// Stats reads what sb uses now.
func (s *Sampler) Stats(sb *store.Sandbox) wire.SandboxStats {
	now := time.Now().UTC()
	out := wire.SandboxStats{ID: sb.ID, Name: sb.Name, State: sb.State, Time: now,
		DiskLimitBytes: uint64(sb.Spec.DiskMiB) << 20}
	if sandbox.HasInstance(sb.State) { // it has cgroups to read
		cg := runtime.ReadCgroupStats(sb.ID)
		out.CPUNanos, out.MemoryBytes, out.MemoryLimitBytes = cg.CPUNanos, cg.MemoryBytes, cg.MemoryLimit
		out.Pids, out.PidsLimit = cg.Pids, cg.PidsLimit
		out.NetRxBytes, out.NetTxBytes, _ = network.Traffic(sb.ID)
	}
	s.mu.Lock()
	s.forget(now)
	if p, ok := s.prev[sb.ID]; ok && out.CPUNanos >= p.nanos && now.Sub(p.at) > 0 {
		pct := float64(out.CPUNanos-p.nanos) / float64(now.Sub(p.at).Nanoseconds()) * 100
		out.CPUPercent = &pct
	}
	s.prev[sb.ID] = cpuSample{nanos: out.CPUNanos, at: now}
	d, fresh := s.disk[sb.ID]
	s.mu.Unlock()
	if !fresh || now.Sub(d.at) > diskEvery {
		// Walked without the lock: one large sandbox must not hold up the others.
		d = diskSample{bytes: s.diskUsed(sb), at: now}
		s.mu.Lock()
		s.disk[sb.ID] = d
		s.mu.Unlock()
	}
	out.DiskBytes = d.bytes
	return out
}

// forget drops samples of sandboxes not read for forgetAfter.
func (s *Sampler) forget(now time.Time) {
	for id, p := range s.prev {
		if now.Sub(p.at) > forgetAfter {
			delete(s.prev, id)
		}
	}
	for id, d := range s.disk {
		if now.Sub(d.at) > forgetAfter {
			delete(s.disk, id)
		}
	}
}

// diskUsed is the space the sandbox's own writes take on the host: the
// allocated blocks of its disk image (sparse) or of its upper dir's files.
func (s *Sampler) diskUsed(sb *store.Sandbox) uint64 {
	root := filepath.Join(s.dataDir, "sandboxes", sb.ID)
	if sb.Spec.DiskMiB > 0 {
		return allocated(filepath.Join(root, "disk.img"))
	}
	var total uint64
	_ = filepath.WalkDir(filepath.Join(root, "upper"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // gone meanwhile, or unreadable: count what we can
		}
		total += allocated(p)
		return nil
	})
	return total
}

func allocated(path string) uint64 {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return 0
	}
	return uint64(st.Blocks) * 512
}
