package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// Load: many sandboxes at once on a small machine, and long runs.

// TestLoad200 creates 200 sandboxes with 50 requests in flight on this 2-core
// machine. Every create succeeds or fails with a clear error (a coded 4xx or
// 503, never a 500 or a hang); every sandbox made runs a command; then all
// are deleted concurrently and nothing is left behind.
func TestLoad200(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	d := startDaemon(t)
	const total, inFlight = 200, 50
	// A request stuck this long is a hang, not load.
	const hang = 5 * time.Minute

	var (
		mu       sync.Mutex
		ids      []string
		refusals = map[string]int{}
	)
	start := time.Now()
	parallel(total, inFlight, func(i int) {
		ctx, cancel := context.WithTimeout(context.Background(), hang)
		defer cancel()
		sb, err := d.client.CreateSandbox(ctx, sdk.CreateSandboxRequest{MemoryMiB: 64, Labels: map[string]string{"load": "yes"}})
		mu.Lock()
		defer mu.Unlock()
		if err == nil {
			ids = append(ids, sb.ID)
			d.created[sb.ID] = true
			return
		}
		if clearError(t, "create", err) {
			refusals[codeOf(err)]++
		}
	})
	created := time.Since(start)
	t.Logf("%d of %d creates succeeded in %s; refused: %v", len(ids), total, created.Round(time.Millisecond), refusals)
	if len(ids) == 0 {
		t.Fatal("no create succeeded")
	}

	// Every sandbox that was made works.
	parallel(len(ids), inFlight, func(i int) {
		ctx, cancel := context.WithTimeout(context.Background(), hang)
		defer cancel()
		res, err := d.client.Exec(ctx, ids[i], sdk.ExecRequest{Shell: "echo $((6*7))"})
		if err != nil || res.Stdout != "42\n" {
			t.Errorf("exec in %s: %+v, %v", ids[i], res, err)
		}
	})
	list, err := d.client.ListSandboxes(context.Background(), sdk.ListOptions{Labels: map[string]string{"load": "yes"}})
	if err != nil || len(list) != len(ids) {
		t.Errorf("list: %d sandboxes, %v; want %d", len(list), err, len(ids))
	}
	for _, sb := range list {
		if sb.State != sdk.StateStarted {
			t.Errorf("%s is %s", sb.ID, sb.State)
		}
	}

	start = time.Now()
	parallel(len(ids), inFlight, func(i int) {
		ctx, cancel := context.WithTimeout(context.Background(), hang)
		defer cancel()
		if err := d.client.DeleteSandbox(ctx, ids[i], true); err != nil {
			t.Errorf("delete %s: %v", ids[i], err)
		}
	})
	t.Logf("deleted %d in %s", len(ids), time.Since(start).Round(time.Millisecond))
	if list, err := d.client.ListSandboxes(context.Background(), sdk.ListOptions{}); err != nil || len(list) != 0 {
		t.Errorf("after deleting everything: %d sandboxes, %v", len(list), err)
	}
	d.assertNoLeaks()
}

// parallel runs f(0) … f(n-1) with at most limit running at once.
func parallel(n, limit int, f func(i int)) {
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			f(i)
		})
	}
	wg.Wait()
}

// clearError reports whether err is one a caller can act on: a coded API
// error other than a 500. Anything else (a 500, a dropped connection, a
// timeout) fails the test.
func clearError(t *testing.T, what string, err error) bool {
	t.Helper()
	var apiErr *sdk.APIError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		t.Errorf("%s hung: %v", what, err)
	case !errors.As(err, &apiErr):
		t.Errorf("%s failed without an API error: %v", what, err)
	case apiErr.StatusCode >= 500 && apiErr.StatusCode != 503, apiErr.Code == "", apiErr.Code == "INTERNAL", apiErr.Message == "":
		t.Errorf("%s: unclear error %d %s %q", what, apiErr.StatusCode, apiErr.Code, apiErr.Message)
	default:
		return true
	}
	return false
}

func codeOf(err error) string {
	var apiErr *sdk.APIError
	if errors.As(err, &apiErr) {
		return string(apiErr.Code)
	}
	return "?"
}

// TestSoak runs create → exec → upload → download → delete loops on a few
// workers and reports errors (there must be none) and how latency drifts
// from the start of the run to its end. By hand, for a set time:
//
//	SBX_SOAK=10m go test -run TestSoak -v ./integration/
//
// Without SBX_SOAK it runs a few rounds, so CI keeps the loop working.
func TestSoak(t *testing.T) {
	var duration time.Duration
	rounds := 3
	if v := os.Getenv("SBX_SOAK"); v != "" {
		var err error
		if duration, err = time.ParseDuration(v); err != nil {
			t.Fatalf("SBX_SOAK=%q: %v", v, err)
		}
		rounds = 0
	}
	d := startDaemon(t)
	const workers = 4
	window := time.Minute // the drift compares the first and last window
	if duration == 0 {
		window = 0
	}

	type sample struct {
		op    string
		at    time.Time
		taken time.Duration
	}
	var (
		mu      sync.Mutex
		samples []sample
		errs    []string
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		errs = append(errs, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	timed := func(op string, f func() error) error {
		start := time.Now()
		err := f()
		mu.Lock()
		samples = append(samples, sample{op, start, time.Since(start)})
		mu.Unlock()
		return err
	}
	rssStart, fdsStart := processStats(d.cmd.Process.Pid)
	end := time.Now().Add(duration)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			payload := make([]byte, 256<<10)
			for i := 0; (rounds > 0 && i < rounds) || (rounds == 0 && time.Now().Before(end)); i++ {
				for j := range payload {
					payload[j] = byte(rng.Uint32())
				}
				var sb *sdk.Sandbox
				err := timed("create", func() (err error) {
					sb, err = d.client.CreateSandbox(ctx, sdk.CreateSandboxRequest{MemoryMiB: 128})
					return err
				})
				if err != nil {
					fail("worker %d round %d: create: %v", w, i, err)
					continue
				}
				mu.Lock()
				d.created[sb.ID] = true
				mu.Unlock()
				if err := timed("exec", func() error {
					res, err := d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: "echo hi; ls /workspace"})
					if err == nil && res.Stdout != "hi\n" {
						err = fmt.Errorf("stdout %q", res.Stdout)
					}
					return err
				}); err != nil {
					fail("worker %d round %d: exec: %v", w, i, err)
				}
				if err := timed("upload", func() error {
					_, err := d.client.Upload(ctx, sb.ID, "/workspace/data", bytes.NewReader(payload), 0o644)
					return err
				}); err != nil {
					fail("worker %d round %d: upload: %v", w, i, err)
				}
				if err := timed("download", func() error {
					rc, err := d.client.Download(ctx, sb.ID, "/workspace/data")
					if err != nil {
						return err
					}
					defer rc.Close()
					got, err := io.ReadAll(rc)
					if err == nil && !bytes.Equal(got, payload) {
						err = fmt.Errorf("downloaded %d bytes that differ from the upload", len(got))
					}
					return err
				}); err != nil {
					fail("worker %d round %d: download: %v", w, i, err)
				}
				if err := timed("delete", func() error { return d.client.DeleteSandbox(ctx, sb.ID, true) }); err != nil {
					fail("worker %d round %d: delete: %v", w, i, err)
				}
			}
		})
	}
	wg.Wait()
	rssEnd, fdsEnd := processStats(d.cmd.Process.Pid)

	ops := map[string][]sample{}
	for _, s := range samples {
		ops[s.op] = append(ops[s.op], s)
	}
	t.Logf("soak: %d workers, %d operations, %d errors; daemon RSS %d → %d KiB, open fds %d → %d",
		workers, len(samples), len(errs), rssStart>>10, rssEnd>>10, fdsStart, fdsEnd)
	for _, op := range []string{"create", "exec", "upload", "download", "delete"} {
		first, last := driftWindows(ops[op], window, func(s sample) time.Time { return s.at })
		p := func(ss []sample) time.Duration {
			ds := make([]time.Duration, len(ss))
			for i, s := range ss {
				ds[i] = s.taken
			}
			return median(ds)
		}
		t.Logf("  %-8s n=%-5d p50 first %-10s last %-10s drift %+.0f%%", op, len(ops[op]), p(first).Round(time.Millisecond), p(last).Round(time.Millisecond), drift(p(first), p(last)))
	}
	for i, e := range errs {
		if i == 10 {
			t.Errorf("… and %d more errors", len(errs)-10)
			break
		}
		t.Error(e)
	}
}

// driftWindows splits samples (in time order) into the first and the last
// window of the run; with window 0, into the first and last third.
func driftWindows[S any](samples []S, window time.Duration, at func(S) time.Time) (first, last []S) {
	if len(samples) == 0 {
		return nil, nil
	}
	sort.SliceStable(samples, func(i, j int) bool { return at(samples[i]).Before(at(samples[j])) })
	if window == 0 {
		n := max(len(samples)/3, 1)
		return samples[:n], samples[len(samples)-n:]
	}
	begin, end := at(samples[0]), at(samples[len(samples)-1])
	for _, s := range samples {
		if at(s).Before(begin.Add(window)) {
			first = append(first, s)
		}
		if at(s).After(end.Add(-window)) {
			last = append(last, s)
		}
	}
	return first, last
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func drift(first, last time.Duration) float64 {
	if first == 0 {
		return 0
	}
	return 100 * (float64(last) - float64(first)) / float64(first)
}

// processStats returns a process's resident memory and open file count.
func processStats(pid int) (rss int64, fds int) {
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &rss)
				rss <<= 10
			}
		}
	}
	entries, _ := os.ReadDir(filepath.Join("/proc", fmt.Sprint(pid), "fd"))
	return rss, len(entries)
}
