package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/sdk"
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

// The thousand (sbx only): -density-many idle sandboxes held at once, and
// what they cost: memory per sandbox (cgroup), the daemon's RSS, exec
// round trips to random ones of them while they sit, and the time to list
// them. Created by 8 clients; deleted afterwards, untimed. Two more exec rows
// split where the time goes: straight to a random sandbox's agent socket
// (no daemon), and through the API to one sandbox over and over (warm).

var densityMany = flag.Int("density-many", 1000, "idle sandboxes of the sbx-only density rows")

func init() {
	registerScenario(Scenario{Order: 51, Name: "idle density: many sandboxes", Run: runDensityMany})
}

func runDensityMany(env *Env, sys System) ([]result, error) {
	sx, ok := asSbx(sys) // also the -sbx-baseline daemon: before and after in one run
	if !ok {
		return nil, fmt.Errorf("%w: sbx only", errSkip)
	}
	n := env.n(*densityMany, 10)
	boxes := make([]Box, n)
	var (
		wg    sync.WaitGroup
		next  atomic.Int64
		first atomic.Value
	)
	for range 8 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n && first.Load() == nil; i = int(next.Add(1)) - 1 {
				b, err := sys.Create()
				if err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
				boxes[i] = b
			}
		})
	}
	wg.Wait()
	defer deleteAll(slices.DeleteFunc(boxes, func(b Box) bool { return b == nil })) // scenario_throughput.go
	if err, _ := first.Load().(error); err != nil {
		return nil, err
	}
	time.Sleep(densitySettle)
	label := func(what string) string { return fmt.Sprintf("%d idle sandboxes: %s", n, what) }
	var per []float64
	for _, b := range boxes {
		init, _, err := b.Pids()
		if err != nil {
			return nil, err
		}
		mem, err := cgroupMemory(init)
		if err != nil {
			return nil, err
		}
		per = append(per, float64(mem)/(1<<20))
	}
	daemon := float64(sumRSS(sx.DaemonPids())) / (1 << 20)
	var anon int64
	for _, p := range sx.DaemonPids() {
		if a, err := rssAnon(p); err == nil {
			anon += a
		}
	}
	execs := measure(label("exec round trip (random sandbox)"), sys.Name(), env.n(200, 10), func() error {
		return boxes[rand.IntN(n)].Exec("true")
	})
	direct := measure(label("exec round trip straight to the agent socket (random sandbox)"), sys.Name(), env.n(200, 10), func() error {
		return agentExecTrue(sx.dataDir, boxes[rand.IntN(n)].(*sbxBox).id)
	})
	same := measure(label("exec round trip (the same sandbox each time)"), sys.Name(), env.n(200, 10), func() error {
		return boxes[0].Exec("true")
	})
	list := measure(label("list them all"), sys.Name(), env.n(20, 3), func() error {
		_, err := sx.client.ListSandboxes(context.Background(), sdk.ListOptions{})
		return err
	})
	return []result{
		summarize(label("memory per sandbox"), sys.Name(), "MiB", per),
		summarize(label("daemon RSS"), sys.Name(), "MiB", []float64{daemon}),
		// The rest of the RSS is the daemon binary's pages: shared, clean,
		// the same with 0 sandboxes (docs/performance.md).
		summarize(label("daemon RSS, anonymous (heap, stacks)"), sys.Name(), "MiB", []float64{float64(anon) / (1 << 20)}),
		execs, direct, same, list,
	}, nil
}

// agentExecTrue runs `true` through sandbox id's agent socket on the host,
// on a new connection, as the daemon would.
func agentExecTrue(dataDir, id string) error {
	sock := filepath.Join(dataDir, "sandboxes", id, "run", agentapi.AgentSock)
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return agentapi.Dial(ctx, sock)
	}}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Post("http://agent"+agentapi.Exec.Path, "application/json", strings.NewReader(`{"cmd":["true"]}`))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var res sdk.ExecResult
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
		return fmt.Errorf("agent %s: status %d: %w", id, resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusOK || res.ExitCode != 0 {
		return fmt.Errorf("agent %s: status %d, exit %d", id, resp.StatusCode, res.ExitCode)
	}
	return nil
}
