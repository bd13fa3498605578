package integration

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// Auto-pause (the lifecycle policy's autoPauseSeconds) and lazy resume: an
// idle sandbox is paused, and the next toolbox call resumes it with every
// process where it was.

// startCounter starts a shell counter in sb that writes its value, kept in a
// shell variable, to /workspace/count ten times a second.
func (d *daemon) startCounter(sb string) {
	d.t.Helper()
	d.exec(sb, `(i=0; while :; do i=$((i+1)); echo $i > /workspace/count.tmp; mv /workspace/count.tmp /workspace/count; sleep 0.1; done > /dev/null 2>&1 &)`)
	waitFor(d.t, 30*time.Second, "the counter to count", func() bool { return d.readFile(sb, "/workspace/count") != "" })
}

// counted reads the counter of a sandbox that is not running (paused or
// stopped) from its upper directory.
func (d *daemon) counted(id string) int {
	d.t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(d.readFileHost(id, "count")))
	if err != nil {
		d.t.Fatalf("counter of %s: %v", id, err)
	}
	return n
}

func TestAutoPauseAndLazyResume(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()

	// Class container: the freezer. The counter stops while paused and
	// goes on after the exec that resumes it.
	sb := d.create(sdk.CreateSandboxRequest{Name: "frozen", AutoPauseSeconds: sdk.Ptr(2)})
	if sb.AutoPauseSeconds != 2 || sb.AutoStopSeconds != 0 || sb.ExpiresAction != "pause" {
		t.Fatalf("policy of the new sandbox: autoPause %d autoStop %d next %q", sb.AutoPauseSeconds, sb.AutoStopSeconds, sb.ExpiresAction)
	}
	d.startCounter("frozen")
	paused := d.waitState("frozen", sdk.StatePaused, 30*time.Second)
	if paused.Reason != "idle" {
		t.Errorf("pause reason %q, want idle", paused.Reason)
	}
	if state, _ := readCgroup("freezer", sb.ID, "freezer.state"); state != "FROZEN" {
		t.Errorf("freezer state %q while paused", state)
	}
	before := d.counted(sb.ID)
	if got, err := d.client.GetSandbox(ctx, "frozen"); err != nil || got.State != sdk.StatePaused {
		t.Fatalf("a GET resumed it: %+v, %v", got, err)
	}
	time.Sleep(500 * time.Millisecond) // five ticks of a running counter
	if after := d.counted(sb.ID); after != before {
		t.Errorf("the counter went on while frozen: %d -> %d", before, after)
	}
	if out := d.exec("frozen", "cat /workspace/count"); out == "" {
		t.Error("exec after the pause read no counter")
	}
	got, err := d.client.GetSandbox(ctx, "frozen")
	if err != nil || got.State != sdk.StateStarted || got.Reason != "lazy" {
		t.Fatalf("after the exec: %+v, %v; want started (lazy)", got, err)
	}
	waitFor(t, 30*time.Second, "the counter to go on", func() bool {
		n, _ := strconv.Atoi(strings.TrimSpace(d.readFile("frozen", "/workspace/count")))
		return n > before
	})
	if trail := d.eventTrail("frozen"); count(trail, "pausing/idle") != 1 || count(trail, "paused/idle") != 1 || count(trail, "started/lazy") != 1 {
		t.Errorf("events: %v", trail)
	}

	// Switching to auto-stop turns auto-pause off, and the other way round.
	upd, err := d.client.UpdateSandbox(ctx, "frozen", sdk.UpdateSandboxRequest{AutoStopSeconds: sdk.Ptr(600)})
	if err != nil || upd.AutoPauseSeconds != 0 || upd.AutoStopSeconds != 600 || upd.ExpiresAction != "stop" {
		t.Fatalf("update to auto-stop: %+v, %v", upd, err)
	}
	if status, e := d.call("PATCH", "/v1/sandboxes/frozen", `{"autoStopSeconds": 60, "autoPauseSeconds": 60}`); status != 400 || e.Code != "INVALID_POLICY" {
		t.Errorf("both intervals: %d %+v, want 400 INVALID_POLICY", status, e)
	}
	if _, _, code := d.sbx("", "update", "frozen", "--auto-pause", "5m"); code != 0 {
		t.Error("sbx update --auto-pause failed")
	}
	if got, _ := d.client.GetSandbox(ctx, "frozen"); got.AutoPauseSeconds != 300 || got.AutoStopSeconds != 0 {
		t.Errorf("after sbx update --auto-pause 5m: autoPause %d autoStop %d", got.AutoPauseSeconds, got.AutoStopSeconds)
	}
}

// TestGVisorAutoPause: a gvisor sandbox pauses after an hour idle by
// default; an idle one is saved to disk and leaves nothing running on the
// host, and the next exec restores it with its counter where it was.
func TestGVisorAutoPause(t *testing.T) {
	d := gvisorDaemon(t)
	ctx := context.Background()
	def := d.create(sdk.CreateSandboxRequest{Name: "gv-default", Class: "gvisor"})
	if def.AutoPauseSeconds != sdk.DefaultAutoPauseSeconds || def.AutoStopSeconds != 0 || def.ExpiresAction != "pause" {
		t.Errorf("default policy of class gvisor: autoPause %d autoStop %d next %q", def.AutoPauseSeconds, def.AutoStopSeconds, def.ExpiresAction)
	}
	if err := d.client.DeleteSandbox(ctx, "gv-default", true); err != nil {
		t.Fatal(err)
	}

	sb := d.create(sdk.CreateSandboxRequest{Name: "gv-idle", Class: "gvisor", AutoPauseSeconds: sdk.Ptr(3)})
	d.startCounter("gv-idle")
	if d.waitState("gv-idle", sdk.StatePaused, 60*time.Second).Reason != "idle" {
		t.Error("paused for another reason than idle")
	}
	if procs := processesWithFilesUnder(filepath.Join(d.dataDir, "sandboxes", sb.ID)); len(procs) > 0 {
		t.Errorf("processes of the paused sandbox: %v", procs)
	}
	if _, err := os.Stat(cgroupDir("memory", sb.ID)); err == nil {
		t.Error("the paused sandbox still has a memory cgroup")
	}
	saved := d.counted(sb.ID)
	// The shell variable, not the file, carries the count on.
	n, err := strconv.Atoi(d.exec("gv-idle", "sleep 0.5; cat /workspace/count"))
	if err != nil || n <= saved || n > saved+100 {
		t.Errorf("counter %d (%v) after the lazy resume, want it to go on from %d", n, err, saved)
	}
	if got, err := d.client.GetSandbox(ctx, "gv-idle"); err != nil || got.State != sdk.StateStarted || got.Reason != "lazy" {
		t.Errorf("after the exec: %+v, %v; want started (lazy)", got, err)
	}
}
