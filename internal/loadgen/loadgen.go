// Package loadgen drives an sbx daemon at the edges of its load: a tenant
// at its rate limit beside one under it (Neighbours), and many API clients
// at once mixing create, exec, files and list (Crowd). bench/load.go
// measures with it, integration/load_tenants_test.go checks with it.
package loadgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sbxhq/sbx/sdk"
	"github.com/sbxhq/sbx/wire"
)

// Tenant is one API key's client and a sandbox of its own.
type Tenant struct {
	Client  *sdk.Client
	Sandbox string
}

// NeighboursResult is what the tenant under its limit saw alone and beside
// the one at its limit, and what the one at its limit got.
type NeighboursResult struct {
	Alone, Beside []time.Duration // the calm tenant's latencies, each phase
	CalmErrors    []error         // every failed call of the calm tenant
	HotOK         int64           // the hot tenant's calls answered
	HotLimited    int64           // ... refused with 429 RATE_LIMITED
	HotOther      []error         // ... failed otherwise
}

// Neighbours has calm make calls requests, one per interval (under its
// rate limit), first alone, then again while hammers clients of hot send
// requests as fast as they are answered (at its limit). The calls cycle
// through list, get, exec, upload and download.
func Neighbours(calm, hot Tenant, calls int, interval time.Duration, hammers int) (*NeighboursResult, error) {
	for _, t := range []Tenant{calm, hot} { // what the downloads read
		if err := call(t, 3); err != nil {
			return nil, err
		}
	}
	res := &NeighboursResult{}
	res.Alone = paced(calm, calls, interval, &res.CalmErrors)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range hammers {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				err := call(hot, i)
				var apiErr *sdk.APIError
				switch {
				case err == nil:
					atomic.AddInt64(&res.HotOK, 1)
				case errors.As(err, &apiErr) && apiErr.StatusCode == 429 && apiErr.Code == wire.CodeRateLimited:
					atomic.AddInt64(&res.HotLimited, 1)
				default:
					mu.Lock()
					res.HotOther = append(res.HotOther, err)
					mu.Unlock()
				}
			}
		})
	}
	time.Sleep(time.Second) // the hot tenant's burst spent: it is at its limit
	res.Beside = paced(calm, calls, interval, &res.CalmErrors)
	close(stop)
	wg.Wait()
	return res, nil
}

// paced makes n calls of t, one each interval, and returns their latencies;
// failures go to errs.
func paced(t Tenant, n int, interval time.Duration, errs *[]error) []time.Duration {
	var lat []time.Duration
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for i := range n {
		<-tick.C
		began := time.Now()
		if err := call(t, i); err != nil {
			*errs = append(*errs, fmt.Errorf("call %d: %w", i, err))
			continue
		}
		lat = append(lat, time.Since(began))
	}
	return lat
}

// call is the i-th call of the cycle list, get, exec, upload, download.
func call(t Tenant, i int) error {
	ctx := context.Background()
	c := t.Client
	var err error
	switch i % 5 {
	case 0:
		_, err = c.ListSandboxes(ctx, sdk.ListOptions{})
	case 1:
		_, err = c.GetSandbox(ctx, t.Sandbox)
	case 2:
		var res *wire.ExecResult
		if res, err = c.Exec(ctx, t.Sandbox, wire.ExecRequest{Cmd: []string{"true"}}); err == nil && res.ExitCode != 0 {
			err = fmt.Errorf("exec: exit %d", res.ExitCode)
		}
	case 3:
		_, err = c.Upload(ctx, t.Sandbox, "/workspace/load", bytes.NewReader([]byte("load")), 0o644)
	case 4:
		var rc interface{ Close() error }
		if rc, err = c.Download(ctx, t.Sandbox, "/workspace/load"); err == nil {
			rc.Close()
		}
	}
	return err
}

// Percentile is the p-th percentile of ds (which it sorts): the smallest
// value at or above p% of them.
func Percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[(len(ds)*p+99)/100-1]
}

// CrowdResult is what Crowd's clients saw, by operation.
type CrowdResult struct {
	Latency map[string][]time.Duration // of the calls answered
	Errors  map[string]map[string]int  // operation → error code (or message) → count
	Elapsed time.Duration
}

// Crowd runs clients API clients at once for d, spread over sandboxes
// sandboxes made first, each in a loop of exec, upload, download, list and,
// one call in ten, the create and delete of a sandbox of its own (when
// fewer than creates are under way; else a download instead, so the crowd
// neither queues behind creates nor becomes a create storm). The
// shared sandboxes are deleted at the end.
func Crowd(host, token string, clients, sandboxes, creates int, d time.Duration) (*CrowdResult, error) {
	ctx := context.Background()
	c := sdk.NewClient(host, token)
	res := &CrowdResult{Latency: map[string][]time.Duration{}, Errors: map[string]map[string]int{}}
	var mu sync.Mutex
	record := func(op string, began time.Time, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err == nil {
			res.Latency[op] = append(res.Latency[op], time.Since(began))
			return
		}
		code := err.Error()
		var apiErr *sdk.APIError
		if errors.As(err, &apiErr) {
			code = fmt.Sprintf("%d %s", apiErr.StatusCode, apiErr.Code)
		}
		if res.Errors[op] == nil {
			res.Errors[op] = map[string]int{}
		}
		res.Errors[op][code]++
	}
	shared := make([]Tenant, sandboxes)
	for i := range shared {
		sb, err := c.CreateSandbox(ctx, wire.CreateSandboxRequest{})
		if err != nil {
			return nil, fmt.Errorf("create shared sandbox %d: %w", i, err)
		}
		shared[i] = Tenant{Client: c, Sandbox: sb.ID}
		defer c.DeleteSandbox(ctx, sb.ID, true)
		if err := call(shared[i], 3); err != nil { // what the downloads read
			return nil, err
		}
	}
	slots := make(chan struct{}, creates)
	began := time.Now()
	end := began.Add(d)
	var wg sync.WaitGroup
	for n := range clients {
		// A client of its own: its own connections, as separate users have.
		own := sdk.NewClient(host, token, sdk.WithHTTPClient(&http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}))
		t := Tenant{Client: own, Sandbox: shared[n%sandboxes].Sandbox}
		wg.Go(func() {
			for i := n; time.Now().Before(end); i++ {
				if i%10 == 9 && tryTake(slots) {
					t0 := time.Now()
					sb, err := t.Client.CreateSandbox(ctx, wire.CreateSandboxRequest{})
					record("create", t0, err)
					if err == nil {
						t0 = time.Now()
						record("delete", t0, t.Client.DeleteSandbox(ctx, sb.ID, true))
					}
					<-slots
					continue
				}
				t0 := time.Now()
				err := call(t, i)
				record([]string{"list", "get", "exec", "upload", "download"}[i%5], t0, err)
			}
		})
	}
	wg.Wait()
	res.Elapsed = time.Since(began)
	return res, nil
}

// tryTake takes a slot of sem if one is free.
func tryTake(sem chan struct{}) bool {
	select {
	case sem <- struct{}{}:
		return true
	default:
		return false
	}
}
