package integration

import (
	"context"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// poolReady waits until pool name has n ready instances and returns it.
func (d *daemon) poolReady(name string, n int) *sdk.Pool {
	d.t.Helper()
	var p *sdk.Pool
	waitFor(d.t, 3*time.Minute, "pool "+name+" to fill", func() bool {
		var err error
		p, err = d.client.GetPool(context.Background(), name)
		if err != nil {
			d.t.Fatalf("get pool: %v", err)
		}
		return p.Ready == n && p.Starting == 0
	})
	return p
}

// runningIDs lists the instances runc runs for the daemon: user sandboxes
// and pool instances alike.
func (d *daemon) runningIDs() map[string]bool {
	d.t.Helper()
	out, err := exec.Command("runc", "--root", filepath.Join(d.dataDir, "runc"), "list", "-q").Output()
	if err != nil {
		d.t.Fatalf("runc list: %v", err)
	}
	ids := map[string]bool{}
	for _, id := range strings.Fields(string(out)) {
		ids[id] = true
	}
	return ids
}

// poolInstances are the running instances that are no user's sandbox.
func (d *daemon) poolInstances() map[string]bool {
	d.t.Helper()
	ids := d.runningIDs()
	list, err := d.client.ListSandboxes(context.Background(), sdk.ListOptions{})
	if err != nil {
		d.t.Fatal(err)
	}
	for _, sb := range list {
		delete(ids, sb.ID)
	}
	return ids
}

// upperFiles lists the paths in a sandbox's writable layer.
func (d *daemon) upperFiles(id string) []string {
	d.t.Helper()
	root := filepath.Join(d.dataDir, "sandboxes", id, "upper")
	var out []string
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, rel)
		return nil
	})
	if err != nil {
		d.t.Fatalf("walk writable layer of %s: %v", id, err)
	}
	slices.Sort(out)
	return out
}

// lookFresh is what a process in a sandbox sees that must not tell an
// adopted pool instance from a fresh one. Addresses differ per sandbox;
// the routes (subnet and gateway) and interfaces do not.
const lookFresh = `hostname; echo ---; env | grep -v '^SHLVL=' | sort; echo ---; cat /etc/resolv.conf /etc/hosts /etc/hostname; echo ---; cat /proc/net/route; ls /sys/class/net; echo ---; pwd; ls -la / /workspace | awk '{print $1, $NF}'`

// TestPool: a matching create adopts a ready instance that then looks like
// a fresh sandbox (hostname, env, network, writable layer) and follows the
// create's egress policy; a mismatch or another team's create starts cold;
// 50 racing creates take each of 10 instances once; the pool refills;
// instances survive a daemon restart; deleting the pool leaks nothing.
func TestPool(t *testing.T) {
	out := newOutside(t)
	d := startDaemon(t, "--egress-allow-private", out.subnet.String())
	ctx := context.Background()
	c := d.client
	tmpl := sdk.PoolTemplate{MemoryMiB: 256, Env: map[string]string{"FROM_POOL": "1", "SHARED": "pool"}}
	want := sdk.CreateSandboxRequest{MemoryMiB: 256, Env: map[string]string{"SHARED": "create", "MINE": "x"},
		Egress: &sdk.EgressPolicy{Mode: sdk.EgressAllowList, CIDRs: []string{out.a.String()}}}

	// The fresh sandbox to compare with, made before any pool exists.
	freshReq := want
	freshReq.Name = "fresh"
	fresh := d.create(freshReq)

	if _, err := c.CreatePool(ctx, sdk.CreatePoolRequest{Name: "p", Template: tmpl, Min: 10, Max: 10}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreatePool(ctx, sdk.CreatePoolRequest{Name: "bad", Template: sdk.PoolTemplate{Image: "no-such-image"}, Min: 1}); errCode(err) != sdk.CodeImageNotFound {
		t.Fatalf("pool of a missing image: %v, want IMAGE_NOT_FOUND", err)
	}
	if _, err := c.CreatePool(ctx, sdk.CreatePoolRequest{Name: "big", Min: 5, Max: 2}); errCode(err) != sdk.CodeInvalidPool {
		t.Fatalf("pool with max < min: %v, want INVALID_POOL", err)
	}
	d.poolReady("p", 10)
	if list, _ := c.ListSandboxes(ctx, sdk.ListOptions{}); len(list) != 1 {
		t.Fatalf("pool instances are listed as sandboxes: %d listed, want 1", len(list))
	}

	// Spec match: adopted, and indistinguishable from the fresh one.
	warmReq := want
	warmReq.Name = "warm"
	warmReq.Labels = map[string]string{"via": "pool"}
	before := d.poolInstances()
	warm := d.create(warmReq)
	if !before[warm.ID] {
		t.Fatalf("a matching create started cold (%s is not one of the pool's instances)", warm.ID)
	}
	if warm.Name != "warm" || warm.Labels["via"] != "pool" || warm.State != sdk.StateStarted {
		t.Fatalf("adopted sandbox: %+v", warm)
	}
	if got, wantFiles := d.upperFiles(warm.ID), d.upperFiles(fresh.ID); !slices.Equal(got, wantFiles) {
		t.Errorf("writable layer of the adopted sandbox: %v, fresh: %v", got, wantFiles)
	}
	gotView := strings.ReplaceAll(d.exec(warm.ID, lookFresh), "warm", "NAME")
	wantView := strings.ReplaceAll(d.exec(fresh.ID, lookFresh), "fresh", "NAME")
	if gotView != wantView {
		t.Errorf("the adopted sandbox looks otherwise than a fresh one:\nadopted:\n%s\nfresh:\n%s", gotView, wantView)
	}
	d.mustFetch(warm.ID, "http://"+out.a.String()+":8080/", "A") // the create's egress policy
	d.mustBeRefused(warm.ID, "http://"+out.b.String()+":8080/")
	if got, _ := c.GetSandbox(ctx, warm.ID); got == nil || got.Name != "warm" {
		t.Fatalf("adopted sandbox not found by id")
	}

	// Mismatch (memory) and another team's create: cold, the pool untouched.
	p0, _ := c.GetPool(ctx, "p")
	cold := d.create(sdk.CreateSandboxRequest{MemoryMiB: 300})
	other, _ := d.teamKey("pool-other", sdk.Quotas{}, allScopes...)
	theirs, err := other.CreateSandbox(ctx, sdk.CreateSandboxRequest{MemoryMiB: 256})
	if err != nil {
		t.Fatal(err)
	}
	d.created[theirs.ID] = true
	pool := d.poolInstances()
	if p1, _ := c.GetPool(ctx, "p"); p1.Adopted != p0.Adopted || pool[cold.ID] || before[cold.ID] || before[theirs.ID] {
		t.Fatalf("a mismatched or other team's create adopted (adopted %d -> %d)", p0.Adopted, p1.Adopted)
	}
	if _, err := other.GetSandbox(ctx, firstKey(pool)); errCode(err) != sdk.CodeSandboxNotFound {
		t.Fatalf("a pool instance is visible by id: %v", err)
	}
	if err := other.DeleteSandbox(ctx, theirs.ID, true); err != nil {
		t.Fatal(err)
	}

	// 50 creates race for the 10 ready instances: each is adopted once.
	d.poolReady("p", 10)
	ready := d.poolInstances()
	var mu sync.Mutex
	var got []string
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sb, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{MemoryMiB: 256})
			if err != nil {
				t.Errorf("racing create: %v", err)
				return
			}
			mu.Lock()
			got = append(got, sb.ID)
			d.created[sb.ID] = true
			mu.Unlock()
		}()
	}
	wg.Wait()
	hits := map[string]int{}
	for _, id := range got {
		if ready[id] {
			hits[id]++
		}
	}
	if len(got) != 50 || len(slices.Compact(slices.Sorted(slices.Values(got)))) != 50 {
		t.Fatalf("50 racing creates gave %d sandboxes, %d distinct", len(got), len(slices.Compact(slices.Sorted(slices.Values(got)))))
	}
	if len(hits) != len(ready) {
		t.Errorf("%d of the %d ready instances were adopted", len(hits), len(ready))
	}
	for id, n := range hits {
		if n != 1 {
			t.Errorf("pool instance %s adopted %d times", id, n)
		}
	}
	for _, id := range got[:3] {
		d.exec(id, "true")
	}

	// Refill after adoption, then a restart keeps the ready instances.
	d.poolReady("p", 10)
	kept := d.poolInstances()
	d.stop()
	d.start()
	if p := d.poolReady("p", 10); p.Ready != 10 {
		t.Fatal("unreachable")
	}
	if after := d.poolInstances(); !mapsEqual(after, kept) {
		t.Errorf("pool instances before the restart %v, after %v", keys(kept), keys(after))
	}
	again := d.create(sdk.CreateSandboxRequest{MemoryMiB: 256, Name: "after-restart"})
	if !kept[again.ID] {
		t.Errorf("no adoption after the restart")
	}
	if h := d.exec(again.ID, "hostname"); h != "after-restart" {
		t.Errorf("hostname after adoption: %q", h)
	}

	// Delete: the pool's instances go, and with every sandbox gone nothing
	// is left (mounts, cgroups, veths, nft rules, processes, directories).
	d.noteInstances()
	if err := c.DeletePool(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetPool(ctx, "p"); errCode(err) != sdk.CodePoolNotFound {
		t.Fatalf("deleted pool: %v", err)
	}
	list, _ := c.ListSandboxes(ctx, sdk.ListOptions{})
	for _, sb := range list {
		if err := c.DeleteSandbox(ctx, sb.ID, true); err != nil {
			t.Fatal(err)
		}
	}
	if ids := d.runningIDs(); len(ids) != 0 {
		t.Fatalf("instances left after deleting the pool and every sandbox: %v", keys(ids))
	}
	d.assertNoLeaks()
}

func firstKey(m map[string]bool) string {
	for k := range m {
		return k
	}
	return ""
}

func keys(m map[string]bool) []string {
	return slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	})
}

func mapsEqual(a, b map[string]bool) bool { return slices.Equal(keys(a), keys(b)) }
