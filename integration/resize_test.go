package integration

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// cgroupInt reads a cgroup file (named the v1 way) of sandbox id as a number.
func cgroupInt(t *testing.T, ctrl, id, v1name string) int64 {
	t.Helper()
	v, err := readCgroup(ctrl, id, v1name)
	if err != nil {
		t.Fatalf("read %s of %s: %v", v1name, id, err)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("%s of %s: %q is not a number", v1name, id, v)
	}
	return n
}

// Resize a running class-container sandbox: memory raised and lowered,
// pids and cpu changed, each read back from its cgroup; a memory limit
// below what a 64 MiB process holds is refused with 409 and changes
// nothing; bad values are 400. The process started first runs throughout:
// no restart.
func TestResizeARunningSandbox(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	c := d.client
	sb := d.create(sdk.CreateSandboxRequest{Name: "rs", CPU: 1, MemoryMiB: 256, PidsLimit: 128})
	// 64 MiB held by a background process: tail keeps the last 64 MiB of
	// its input and, at its end, blocks writing them to a reader that never
	// reads. (A shell variable of that size held its memory only while the
	// shell read it.)
	if _, err := c.StartProcess(ctx, "rs", sdk.StartProcessRequest{ID: "hog", Shell: "head -c 67108864 /dev/zero | tail -c 67108864 | sleep 600"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "the hog to hold 64 MiB", func() bool {
		st, err := c.Stats(ctx, "rs")
		return err == nil && st.MemoryBytes >= 64<<20
	})
	memLimit := func() int64 { return cgroupInt(t, "memory", sb.ID, "memory.limit_in_bytes") }

	for _, mib := range []int{512, 128} { // raise, then lower
		got, err := c.UpdateSandbox(ctx, "rs", sdk.UpdateSandboxRequest{MemoryMiB: sdk.Ptr(mib)})
		if err != nil {
			t.Fatalf("memoryMiB %d: %v", mib, err)
		}
		if got.MemoryMiB != mib || memLimit() != int64(mib)<<20 {
			t.Errorf("memoryMiB %d: sandbox says %d, cgroup %d", mib, got.MemoryMiB, memLimit())
		}
	}

	status, e := d.call("PATCH", "/v1/sandboxes/rs", `{"memoryMiB": 32, "pidsLimit": 64}`)
	if status != 409 || e.Code != sdk.CodeMemoryBelowUsage {
		t.Errorf("memoryMiB 32 under a 64 MiB process: %d %s %q, want 409 %s", status, e.Code, e.Message, sdk.CodeMemoryBelowUsage)
	}
	if got, err := c.GetSandbox(ctx, "rs"); err != nil || got.MemoryMiB != 128 || got.PidsLimit != 128 || memLimit() != 128<<20 {
		t.Errorf("after the refusal: %+v %v, cgroup %d; want 128 MiB and pids 128 unchanged", got, err, memLimit())
	}
	if n := cgroupInt(t, "pids", sb.ID, "pids.max"); n != 128 {
		t.Errorf("pids.max after the refusal: %d, want 128", n)
	}

	for _, bad := range []struct{ body, code string }{
		{`{"memoryMiB": 8}`, string(sdk.CodeInvalidMemory)},
		{`{"memoryMiB": 0}`, string(sdk.CodeInvalidMemory)},
		{`{"cpu": 0}`, string(sdk.CodeInvalidCPU)},
		{`{"cpu": 1000}`, string(sdk.CodeInvalidCPU)},
		{`{"pidsLimit": 2}`, string(sdk.CodeInvalidPidsLimit)},
	} {
		if status, e := d.call("PATCH", "/v1/sandboxes/rs", bad.body); status != 400 || string(e.Code) != bad.code {
			t.Errorf("%s: %d %s, want 400 %s", bad.body, status, e.Code, bad.code)
		}
	}

	for _, n := range []int{512, 64} {
		if _, err := c.UpdateSandbox(ctx, "rs", sdk.UpdateSandboxRequest{PidsLimit: sdk.Ptr(n)}); err != nil {
			t.Fatalf("pidsLimit %d: %v", n, err)
		}
		if got := cgroupInt(t, "pids", sb.ID, "pids.max"); got != int64(n) {
			t.Errorf("pidsLimit %d: pids.max %d", n, got)
		}
	}
	for _, cpu := range []float64{0.5, 2} {
		if _, err := c.UpdateSandbox(ctx, "rs", sdk.UpdateSandboxRequest{CPU: sdk.Ptr(cpu)}); err != nil {
			t.Fatalf("cpu %g: %v", cpu, err)
		}
		if got := cgroupInt(t, "cpu", sb.ID, "cpu.cfs_quota_us"); got != int64(cpu*100000) {
			t.Errorf("cpu %g: quota %d, want %d", cpu, got, int64(cpu*100000))
		}
	}
	if p, err := c.GetProcess(ctx, "rs", "hog"); err != nil || p.State != sdk.ProcessRunning {
		t.Errorf("the process started before the resizes: %+v, %v; want it running (no restart)", p, err)
	}
}

// A stopped sandbox takes new limits at its next start; labels are
// replaced, shown by GET and matched by list filters, and {} removes them.
func TestResizeStoppedAndRelabel(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	c := d.client
	sb := d.create(sdk.CreateSandboxRequest{Name: "rl", MemoryMiB: 256, PidsLimit: 128, CPU: 1, Labels: map[string]string{"team": "a", "old": "x"}})

	got, err := c.UpdateSandbox(ctx, "rl", sdk.UpdateSandboxRequest{Labels: map[string]string{"team": "b", "env": "dev"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Labels) != 2 || got.Labels["team"] != "b" || got.Labels["env"] != "dev" {
		t.Errorf("labels after the update: %v", got.Labels)
	}
	if got, err := c.GetSandbox(ctx, "rl"); err != nil || len(got.Labels) != 2 || got.Labels["team"] != "b" {
		t.Errorf("GET after the update: %v, %v", got.Labels, err)
	}
	count := func(labels map[string]string) int {
		list, err := c.ListSandboxes(ctx, sdk.ListOptions{Labels: labels})
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}
	if n, m, o := count(map[string]string{"team": "b", "env": "dev"}), count(map[string]string{"team": "a"}), count(map[string]string{"old": "x"}); n != 1 || m != 0 || o != 0 {
		t.Errorf("list by new labels %d (want 1), by replaced team=a %d, by removed old=x %d (want 0)", n, m, o)
	}
	if status, e := d.call("PATCH", "/v1/sandboxes/rl", `{"labels": {"bad key": "v"}}`); status != 400 || e.Code != sdk.CodeInvalidLabel {
		t.Errorf("bad label key: %d %s", status, e.Code)
	}
	if status, _ := d.call("PATCH", "/v1/sandboxes/rl", `{"autoStopSeconds": 900}`); status != 200 || count(map[string]string{"team": "b"}) != 1 {
		t.Errorf("an update without labels: %d; labels must stay", status)
	}
	// An empty map (sent as {}) removes them all.
	if _, err := c.UpdateSandbox(ctx, "rl", sdk.UpdateSandboxRequest{Labels: map[string]string{}}); err != nil {
		t.Errorf("labels {}: %v", err)
	}
	if got, err := c.GetSandbox(ctx, "rl"); err != nil || len(got.Labels) != 0 {
		t.Errorf("labels after {}: %v, %v; want none", got.Labels, err)
	}

	if _, err := c.StopSandbox(ctx, "rl", sdk.StopOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	got, err = c.UpdateSandbox(ctx, "rl", sdk.UpdateSandboxRequest{CPU: sdk.Ptr(1.5), MemoryMiB: sdk.Ptr(300), PidsLimit: sdk.Ptr(100)})
	if err != nil {
		t.Fatal(err)
	}
	if got.State != sdk.StateStopped || got.CPU != 1.5 || got.MemoryMiB != 300 || got.PidsLimit != 100 {
		t.Errorf("stopped sandbox after the update: %+v; want it stopped with the new limits", got)
	}
	if _, err := c.StartSandbox(ctx, "rl"); err != nil {
		t.Fatal(err)
	}
	mem := cgroupInt(t, "memory", sb.ID, "memory.limit_in_bytes")
	pids := cgroupInt(t, "pids", sb.ID, "pids.max")
	quota := cgroupInt(t, "cpu", sb.ID, "cpu.cfs_quota_us")
	if mem != 300<<20 || pids != 100 || quota != 150000 {
		t.Errorf("after the next start: memory %d, pids %d, cpu quota %d; want %d, 100, 150000", mem, pids, quota, 300<<20)
	}
}

// Class gvisor: Debian's runsc has no "update", so a running sandbox's new
// limits are stored (the cgroup keeps the old ones) and taken at its next
// start.
func TestResizeGVisorAtNextStart(t *testing.T) {
	d := gvisorDaemon(t)
	ctx := context.Background()
	c := d.client
	sb := d.create(sdk.CreateSandboxRequest{Name: "gr", Class: "gvisor", MemoryMiB: 256})
	got, err := c.UpdateSandbox(ctx, "gr", sdk.UpdateSandboxRequest{MemoryMiB: sdk.Ptr(300)})
	if err != nil {
		t.Fatal(err)
	}
	if got.MemoryMiB != 300 || got.State != sdk.StateStarted {
		t.Errorf("after the update: memoryMiB %d state %s, want 300 started", got.MemoryMiB, got.State)
	}
	if n := cgroupInt(t, "memory", sb.ID, "memory.limit_in_bytes"); n != 256<<20 {
		t.Errorf("running gvisor instance's memory limit %d, want the old %d until the next start", n, 256<<20)
	}
	if _, err := c.StopSandbox(ctx, "gr", sdk.StopOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartSandbox(ctx, "gr"); err != nil {
		t.Fatal(err)
	}
	if n := cgroupInt(t, "memory", sb.ID, "memory.limit_in_bytes"); n != 300<<20 {
		t.Errorf("memory limit after the next start: %d, want %d", n, 300<<20)
	}
}
