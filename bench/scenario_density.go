package main

import (
	"fmt"
	"time"
)

func init() {
	registerScenario(Scenario{Order: 50, Name: "idle density", Run: runDensity})
}

// densityN idle sandboxes are measured together.
const densityN = 20

// densitySettle lets every instance finish starting up (page faults, lazy
// runtime init) before its memory is read.
const densitySettle = 3 * time.Second

// runDensity starts densityN idle sandboxes and reports, per sandbox, the
// memory charged to its cgroup (memory.usage_in_bytes: its processes and the
// page cache they touched) plus the RSS of the per-sandbox processes outside
// it (containerd-shim for Docker, conmon for podman). A second row spreads
// the growth of the system's daemons (sbx serve; dockerd and containerd)
// over the sandboxes.
func runDensity(env *Env, sys System) ([]result, error) {
	n := env.n(densityN, 3)
	dm, hasDaemon := sys.(daemoned)
	var before int64
	if hasDaemon {
		before = sumRSS(dm.DaemonPids())
	}
	var boxes []Box
	defer func() {
		for _, b := range boxes {
			b.Delete()
		}
	}()
	for range n {
		b, err := sys.Create()
		if err != nil {
			return nil, err
		}
		boxes = append(boxes, b)
		if err := b.Exec("true"); err != nil { // a sandbox that has run something
			return nil, err
		}
	}
	time.Sleep(densitySettle)
	var per []float64
	for _, b := range boxes {
		init, shims, err := b.Pids()
		if err != nil {
			return nil, err
		}
		mem, err := cgroupMemory(init)
		if err != nil {
			return nil, err
		}
		per = append(per, float64(mem+sumRSS(shims))/(1<<20))
	}
	name := fmt.Sprintf("idle density: memory per sandbox (%d idle)", n)
	out := []result{summarize(name, sys.Name(), "MiB", per)}
	if hasDaemon {
		growth := float64(sumRSS(dm.DaemonPids())-before) / (1 << 20) / float64(n)
		out = append(out, summarize(fmt.Sprintf("idle density: daemon RSS growth per sandbox (%d idle)", n), sys.Name(), "MiB", []float64{growth}))
	}
	return out, nil
}

func sumRSS(pids []int) int64 {
	var total int64
	for _, p := range pids {
		if r, err := rss(p); err == nil {
			total += r
		}
	}
	return total
}
