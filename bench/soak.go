package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/sbxhq/sbx/internal/census"
	"github.com/sbxhq/sbx/internal/chaos"
	"github.com/sbxhq/sbx/sdk"
)

var (
	soakFor     = flag.Duration("soak", 0, "instead of the scenarios: run a mixed workload on sbx for this long (5m, 1h), with a census and p99 latencies each minute; fails unless the census stays flat and every acknowledged write reads back")
	soakWorkers = flag.Int("soak-workers", 3, "concurrent clients of the soak")
)

// Slack of the soak's flatness check: the daemon's fds and threads may move
// by a few (pooled connections, the Go runtime's threads), its memory by
// what a garbage collection cycle holds.
const (
	soakFDSlack     = 16
	soakThreadSlack = 8
	soakRSSGrowth   = 1.5
)

// soakStats collects one minute's latencies by operation.
type soakStats struct {
	mu   sync.Mutex
	lat  map[string][]time.Duration
	errs []string
}

func (st *soakStats) time(op string, f func() error) error {
	began := time.Now()
	err := f()
	st.mu.Lock()
	defer st.mu.Unlock()
	if err != nil {
		st.errs = append(st.errs, fmt.Sprintf("%s: %v", op, err))
		return err
	}
	st.lat[op] = append(st.lat[op], time.Since(began))
	return nil
}

// take returns and clears the minute's latencies and errors.
func (st *soakStats) take() (map[string][]time.Duration, []string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	lat, errs := st.lat, st.errs
	st.lat, st.errs = map[string][]time.Duration{}, nil
	return lat, errs
}

func p99(ds []time.Duration) time.Duration { return percentile(ds, 99) } // chaos.go

// runSoak drives s with soakWorkers clients for d: each round creates a
// sandbox, runs a command, writes and reads back a file, runs a session
// whose shell exits and is replaced, and deletes it; besides, each worker
// writes into a sandbox kept for the whole soak, and reads every file back
// at the end. Each minute it prints a census of the daemon (internal/census)
// and the p99 of each operation.
func runSoak(s *sbxSystem, d time.Duration) error {
	ctx := context.Background()
	c := s.client
	var mu sync.Mutex
	ids := map[string]bool{}
	scope := census.Scope{DataDir: s.dataDir, Bridge: benchNet.bridge, Subnet: benchNet.subnet, PID: s.cmd.Process.Pid,
		Sandbox: func(id string) bool { mu.Lock(); defer mu.Unlock(); return ids[id] }}
	made := func(id string) { mu.Lock(); ids[id] = true; mu.Unlock() }

	st := &soakStats{lat: map[string][]time.Duration{}}
	round := func() error {
		var sb *sdk.Sandbox
		if err := st.time("create", func() (err error) { sb, err = c.CreateSandbox(ctx, sdk.CreateSandboxRequest{}); return }); err != nil {
			return err
		}
		made(sb.ID)
		defer st.time("delete", func() error { return c.DeleteSandbox(ctx, sb.ID, true) })
		st.time("exec", func() error {
			res, err := c.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: "echo ok"})
			if err == nil && res.Stdout != "ok\n" {
				err = fmt.Errorf("exec answered %q", res.Stdout)
			}
			return err
		})
		data := make([]byte, 256<<10)
		rand.Read(data)
		st.time("upload", func() error {
			_, err := c.Upload(ctx, sb.ID, "/workspace/f", bytes.NewReader(data), 0o644)
			return err
		})
		st.time("download", func() error { return chaos.ReadBack(c, sb.ID, "/workspace/f", data) })
		st.time("session", func() error {
			if _, err := c.CreateSession(ctx, sb.ID, sdk.CreateSessionRequest{ID: "s"}); err != nil {
				return err
			}
			c.SessionExec(ctx, sb.ID, "s", sdk.SessionExecRequest{Command: "export X=1; exit"})
			res, err := c.SessionExec(ctx, sb.ID, "s", sdk.SessionExecRequest{Command: `echo "[$X]"`})
			if err == nil && (res.Stdout != "[]\n" || !res.ShellRestarted) {
				err = fmt.Errorf("after exit the session answered %+v", res)
			}
			return err
		})
		return nil
	}

	// A warm-up round, so the baseline holds what the first create makes
	// once (the base image's layers, the store's pages).
	if err := round(); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	st.take()
	base := census.Take(scope)

	keep := make([]*sdk.Sandbox, *soakWorkers)
	for w := range keep {
		sb, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: fmt.Sprintf("soak-keep-%d", w)})
		if err != nil {
			return err
		}
		made(sb.ID)
		keep[w] = sb
	}
	written := make([]map[string][]byte, *soakWorkers) // acknowledged writes by worker
	end := time.Now().Add(d)
	var wg sync.WaitGroup
	for w := range *soakWorkers {
		written[w] = map[string][]byte{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(end); i++ {
				round() // its failures are in st
				data := []byte(fmt.Sprintf("worker %d round %d\n", w, i))
				path := fmt.Sprintf("/workspace/ack-%d", i%50)
				if st.time("upload", func() error {
					_, err := c.Upload(ctx, keep[w].ID, path, bytes.NewReader(data), 0o644)
					return err
				}) == nil {
					written[w][path] = data
				}
			}
		}()
	}

	fmt.Printf("%-6s %6s %9s %9s %9s %9s %6s %7s %6s %6s %6s %5s %7s %7s\n",
		"minute", "ops", "create99", "exec99", "upload99", "session99", "procs", "cgroups", "mounts", "loops", "links", "fds", "threads", "rssMiB")
	var samples []*census.Census
	var failures []string
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	for minute, finished := 1, false; !finished; minute++ {
		select {
		case <-tick.C:
		case <-done:
			finished = true
		}
		lat, errs := st.take()
		failures = append(failures, errs...)
		cs := census.Take(scope)
		samples = append(samples, cs)
		ops := 0
		for _, l := range lat {
			ops += len(l)
		}
		fmt.Printf("%-6d %6d %9s %9s %9s %9s %6d %7d %6d %6d %6d %5d %7d %7d\n", minute, ops,
			p99(lat["create"]).Round(time.Millisecond), p99(lat["exec"]).Round(time.Millisecond),
			p99(lat["upload"]).Round(time.Millisecond), p99(lat["session"]).Round(time.Millisecond),
			len(cs.Processes), len(cs.Cgroups), len(cs.Mounts), len(cs.Loops), len(cs.Links), cs.FDs, cs.Threads, cs.RSSBytes>>20)
	}

	// Every acknowledged write reads back, then the kept sandboxes go.
	for w, sb := range keep {
		for path, data := range written[w] {
			if err := chaos.ReadBack(c, sb.ID, path, data); err != nil {
				failures = append(failures, fmt.Sprintf("acknowledged write %s of %s: %v", path, sb.Name, err))
			}
		}
		if err := c.DeleteSandbox(ctx, sb.ID, true); err != nil {
			failures = append(failures, fmt.Sprintf("delete %s: %v", sb.Name, err))
		}
	}
	final := census.Take(scope)
	for _, ch := range census.Grown(census.Diff(base.Host(), final.Host())) {
		failures = append(failures, "left after the soak: "+ch.String())
	}
	first := samples[0]
	switch {
	case final.FDs > base.FDs+soakFDSlack:
		failures = append(failures, fmt.Sprintf("the daemon's fds grew from %d to %d", base.FDs, final.FDs))
	case final.Threads > base.Threads+soakThreadSlack:
		failures = append(failures, fmt.Sprintf("the daemon's threads grew from %d to %d", base.Threads, final.Threads))
	case float64(final.RSSBytes) > soakRSSGrowth*float64(first.RSSBytes):
		failures = append(failures, fmt.Sprintf("the daemon's memory grew from %d to %d MiB", first.RSSBytes>>20, final.RSSBytes>>20))
	}
	fmt.Printf("baseline: fds %d, threads %d, rss %d MiB; after: fds %d, threads %d, rss %d MiB\n",
		base.FDs, base.Threads, base.RSSBytes>>20, final.FDs, final.Threads, final.RSSBytes>>20)
	if len(failures) > 0 {
		for _, f := range failures {
			log.Print("soak: ", f)
		}
		return fmt.Errorf("soak failed: %d problems (above)", len(failures))
	}
	fmt.Println("soak passed: the census is flat and every acknowledged write read back")
	return nil
}
