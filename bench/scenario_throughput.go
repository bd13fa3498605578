package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Sustained cold creates (sbx only): workers create sandboxes back to back
// for -throughput-for (default 60 s) and keep them; the row is creates per
// second over that time, with the latency of each create under that load.
// The sandboxes are deleted afterwards, untimed.

var (
	throughputFor     = flag.Duration("throughput-for", time.Minute, "how long the sustained-creates row creates")
	throughputWorkers = flag.Int("throughput-workers", 8, "concurrent clients of the sustained-creates row")
)

func init() {
	registerScenario(Scenario{Order: 45, Name: "sustained cold creates", Run: runThroughput})
}

func runThroughput(env *Env, sys System) ([]result, error) {
	var sx *sbxSystem
	switch s := sys.(type) {
	case *sbxSystem:
		sx = s
	case *secondSbx: // -sbx-baseline: before and after in one run
		sx = s.sbxSystem
	default:
		return nil, fmt.Errorf("%w: sbx only", errSkip)
	}
	span := *throughputFor
	if env.Quick {
		span = 3 * time.Second
	}
	var (
		mu    sync.Mutex
		boxes []Box
		ms    []float64
		first error
		done  atomic.Bool
		wg    sync.WaitGroup
	)
	cpu0, child0 := cpuTime(sx.DaemonPids()[0])
	start := time.Now()
	time.AfterFunc(span, func() { done.Store(true) })
	for range *throughputWorkers {
		wg.Go(func() {
			for !done.Load() {
				t0 := time.Now()
				b, err := sys.Create()
				mu.Lock()
				if err != nil {
					if first == nil {
						first = err
					}
					done.Store(true)
				} else {
					boxes = append(boxes, b)
					ms = append(ms, float64(time.Since(t0).Microseconds())/1000)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu1, child1 := cpuTime(sx.DaemonPids()[0])
	perCreate := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(max(len(ms), 1)) }
	deleteAll(boxes)
	if first != nil {
		return nil, first
	}
	rate := float64(len(ms)) / elapsed.Seconds()
	name := fmt.Sprintf("sustained cold creates, %d clients for %s", *throughputWorkers, span)
	return []result{
		{Scenario: name + ": creates/s", System: sys.Name(), N: len(ms), Unit: "creates/s", Better: "higher", P50: rate, P95: rate, P99: rate},
		summarize(name+": each create", sys.Name(), "ms", ms),
		// CPU, unlike latency, hardly depends on what else the machine runs.
		summarize(name+": daemon CPU per create", sys.Name(), "ms", []float64{perCreate(cpu1 - cpu0)}),
		summarize(name+": CPU of the daemon's children (runc, nft) per create", sys.Name(), "ms", []float64{perCreate(child1 - child0)}),
	}, nil
}

// cpuTime is the user and system CPU time process pid has used, and that
// of its children it has waited for.
func cpuTime(pid int) (own, children time.Duration) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0
	}
	// Fields after the command (in parentheses, which may hold spaces):
	// utime, stime, cutime and cstime are the 12th to 15th, in clock
	// ticks (100 Hz).
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 15 {
		return 0, 0
	}
	tick := func(i int) time.Duration { n, _ := strconv.Atoi(f[i]); return time.Duration(n) * 10 * time.Millisecond }
	return tick(11) + tick(12), tick(13) + tick(14)
}

// deleteAll deletes boxes with a few workers.
func deleteAll(boxes []Box) {
	ch := make(chan Box)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for b := range ch {
				b.Delete()
			}
		})
	}
	for _, b := range boxes {
		ch <- b
	}
	close(ch)
	wg.Wait()
}
