package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// Tests of class gvisor (runsc): pause and resume with memory, forks,
// memory snapshots, lineage. Each proves the integrity of a running process
// with memcheck (testdata/memcheck): 64 MiB of random data whose checksum it
// verifies on request, the same process (nonce) before and after.

// gvisorDaemon starts a daemon for gvisor tests, with args as more flags of
// sbx serve, and, after its own cleanup has deleted every sandbox, checks
// that runsc holds no instance either.
func gvisorDaemon(t *testing.T, args ...string) *daemon {
	t.Helper()
	if _, err := exec.LookPath("runsc"); err != nil {
		t.Skip("needs runsc (apt-get install runsc)")
	}
	var d *daemon
	t.Cleanup(func() { // registered first: runs after the daemon's cleanup
		if d == nil {
			return
		}
		root, bin := filepath.Join(d.dataDir, "runsc"), daemonRunsc(d.args) // gvisor_runsc_test.go
		out, _ := exec.Command(bin, "--root", root, "list", "--quiet").Output()
		for _, id := range strings.Fields(string(out)) {
			t.Errorf("leaked runsc instance %s", id)
			exec.Command(bin, "--root", root, "delete", "--force", id).Run()
		}
	})
	d = startDaemon(t, args...)
	return d
}

var (
	memcheckOnce sync.Once
	memcheckPath string
	memcheckErr  error
)

// memcheckBinary builds testdata/memcheck once, static.
func memcheckBinary(t *testing.T) string {
	t.Helper()
	memcheckOnce.Do(func() {
		memcheckPath = filepath.Join(filepath.Dir(sbxBin), "memcheck")
		cmd := exec.Command("go", "build", "-o", memcheckPath, "./testdata/memcheck")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			memcheckErr = fmt.Errorf("build memcheck: %v\n%s", err, out)
		}
	})
	if memcheckErr != nil {
		t.Fatal(memcheckErr)
	}
	return memcheckPath
}

func (d *daemon) exec(sb, shell string) string {
	d.t.Helper()
	res, err := d.client.Exec(context.Background(), sb, sdk.ExecRequest{Shell: shell, TimeoutSeconds: 60})
	if err != nil {
		d.t.Fatalf("exec %q in %s: %v", shell, sb, err)
	}
	if res.ExitCode != 0 {
		d.t.Fatalf("exec %q in %s: exit %d: %s%s", shell, sb, res.ExitCode, res.Stdout, res.Stderr)
	}
	return strings.TrimSpace(res.Stdout)
}

// startWorkload uploads memcheck into sb and starts, in the background: the
// checker holding 64 MiB; a shell counter whose value lives in a shell
// variable; a web server on 127.0.0.1:8080.
func (d *daemon) startWorkload(sb string) {
	d.t.Helper()
	f, err := os.Open(memcheckBinary(d.t))
	if err != nil {
		d.t.Fatal(err)
	}
	defer f.Close()
	if _, err := d.client.Upload(context.Background(), sb, "/workspace/memcheck", f, 0o755); err != nil {
		d.t.Fatal(err)
	}
	d.exec(sb, `cd /workspace && mkdir -p www && echo served > www/index.html
		(./memcheck hold 64 /workspace > memcheck.out 2>&1 &)
		(i=0; while :; do i=$((i+1)); echo $i > count.tmp; mv count.tmp count; sleep 0.05; done > /dev/null 2>&1 &)
		(httpd -f -p 127.0.0.1:8080 -h /workspace/www > /dev/null 2>&1 &)`)
	waitFor(d.t, 60*time.Second, "memcheck to hold its data", func() bool {
		return strings.HasPrefix(d.readFile(sb, "/workspace/memcheck.status"), "ok ")
	})
}

func (d *daemon) readFile(sb, path string) string {
	rc, err := d.client.Download(context.Background(), sb, path)
	if err != nil {
		return ""
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	return string(b)
}

// memStatus is one verdict of memcheck.
type memStatus struct {
	ok     bool
	nonce  string
	checks int
}

// verify asks memcheck in sb to checksum its data and returns the verdict.
func (d *daemon) verify(sb string) memStatus {
	d.t.Helper()
	before := d.parseStatus(sb)
	d.exec(sb, `kill -USR1 $(cat /workspace/memcheck.pid)`)
	var st memStatus
	waitFor(d.t, 60*time.Second, "memcheck's verdict in "+sb, func() bool {
		st = d.parseStatus(sb)
		return st.checks > before.checks
	})
	return st
}

func (d *daemon) parseStatus(sb string) memStatus {
	f := strings.Fields(d.readFile(sb, "/workspace/memcheck.status"))
	if len(f) != 4 {
		return memStatus{checks: -1}
	}
	n, _ := strconv.Atoi(f[2])
	return memStatus{ok: f[0] == "ok", nonce: f[1], checks: n}
}

func (d *daemon) count(sb string) int {
	d.t.Helper()
	n, err := strconv.Atoi(d.exec(sb, "cat /workspace/count"))
	if err != nil {
		d.t.Fatalf("count in %s: %v", sb, err)
	}
	return n
}

// checkTicks checks that memcheck's log, written through one open file, is
// "tick 1" … "tick N" with nothing lost or overwritten.
func (d *daemon) checkTicks(sb string) {
	d.t.Helper()
	lines := strings.Split(strings.TrimSpace(d.readFile(sb, "/workspace/memcheck.log")), "\n")
	for i, l := range lines {
		if l != fmt.Sprintf("tick %d", i+1) {
			d.t.Fatalf("%s: memcheck.log line %d is %q, want tick %d", sb, i+1, l, i+1)
		}
	}
}

// checkWorkload checks that sb runs the workload started in its ancestor
// (nonce), that the checker's data is intact, that the counter goes on from
// at least from, and that the web server answers.
func (d *daemon) checkWorkload(sb, nonce string, from int) {
	d.t.Helper()
	if got := d.exec(sb, "wget -qO- http://127.0.0.1:8080/"); got != "served" {
		d.t.Errorf("%s: web server answered %q", sb, got)
	}
	st := d.verify(sb)
	if !st.ok || st.nonce != nonce {
		d.t.Errorf("%s: memcheck says ok=%v nonce %s, want ok and the original process %s", sb, st.ok, st.nonce, nonce)
	}
	waitFor(d.t, 30*time.Second, "the counter to go on in "+sb, func() bool { return d.count(sb) > from })
	d.checkTicks(sb)
}

func TestGVisorSandbox(t *testing.T) {
	d := gvisorDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{Name: "gv", Class: "gvisor", MemoryMiB: 256})
	if sb.Class != "gvisor" || sb.Network != sdk.NetworkBridge {
		t.Fatalf("class %q network %q, want gvisor, bridge", sb.Class, sb.Network)
	}
	// A user-space kernel: gVisor's own boot messages.
	if out := d.exec("gv", "dmesg | head -1"); !strings.Contains(out, "gVisor") {
		t.Errorf("dmesg = %q, want gVisor's", out)
	}
	if out := d.exec("gv", "hostname; echo hi > /workspace/f; cat /workspace/f"); out != "gv\nhi" {
		t.Errorf("exec = %q", out)
	}
	// The memory limit is on the cgroup of gVisor's host processes.
	limit, err := readCgroup("memory", sb.ID, "memory.limit_in_bytes")
	if err == nil && limit != strconv.Itoa(256<<20) {
		t.Errorf("memory limit %s", limit)
	}
	// A filesystem snapshot of a running gvisor sandbox holds what was just
	// written: gVisor's page cache is flushed to the host first.
	d.exec("gv", "echo fresh > /workspace/unsynced")
	if _, err := d.client.CreateSnapshot(ctx, "gv", sdk.CreateSnapshotRequest{Name: "gv-files"}); err != nil {
		t.Fatal(err)
	}
	copy := d.create(sdk.CreateSandboxRequest{Name: "gv-copy", Snapshot: "gv-files"})
	if copy.Class != "gvisor" {
		t.Errorf("copy of a gvisor snapshot has class %q", copy.Class)
	}
	if got := d.exec("gv-copy", "cat /workspace/unsynced /workspace/f"); got != "fresh\nhi" {
		t.Errorf("copy sees %q", got)
	}
	if _, err := d.client.StopSandbox(ctx, "gv", sdk.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.client.StartSandbox(ctx, "gv"); err != nil {
		t.Fatal(err)
	}
	if out := d.exec("gv", "cat /workspace/f"); out != "hi" {
		t.Errorf("after a restart f = %q", out)
	}
	if status, eb := d.call("POST", "/v1/sandboxes", `{"class": "vm"}`); status != http.StatusBadRequest || eb.Code != "INVALID_CLASS" {
		t.Errorf("class vm: %d %+v, want 400 INVALID_CLASS", status, eb)
	}

	// gVisor's network stack sees the interfaces of the namespace it runs
	// in: the veth of a bridge sandbox, loopback alone with network none.
	if dev := d.exec("gv", "cat /proc/net/dev"); !strings.Contains(dev, "eth0:") {
		t.Errorf("bridge sandbox: /proc/net/dev has no eth0:\n%s", dev)
	}
	quiet := d.create(sdk.CreateSandboxRequest{Name: "gv-none", Class: "gvisor", Network: sdk.NetworkNone})
	if quiet.Network != sdk.NetworkNone || quiet.Egress != nil {
		t.Errorf("network none: network %q egress %+v", quiet.Network, quiet.Egress)
	}
	dev := d.exec("gv-none", "cat /proc/net/dev")
	if !strings.Contains(dev, "lo:") || strings.Count(dev, ":") != 1 {
		t.Errorf("network none: want loopback only in /proc/net/dev:\n%s", dev)
	}
}

// TestGVisorPauseResume pauses a busy sandbox: nothing of it runs on the
// host while paused, and everything goes on after the resume.
func TestGVisorPauseResume(t *testing.T) {
	d := gvisorDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{Name: "p", Class: "gvisor"})
	d.startWorkload("p")
	nonce := d.verify("p").nonce

	paused, err := d.client.PauseSandbox(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	if paused.State != sdk.StatePaused {
		t.Fatalf("state %s after pause", paused.State)
	}
	// No process, no cgroup (so no memory) on the host.
	if procs := processesWithFilesUnder(filepath.Join(d.dataDir, "sandboxes", sb.ID)); len(procs) > 0 {
		t.Errorf("processes of the paused sandbox: %v", procs)
	}
	if dirs := leftCgroups(sb.ID); len(dirs) > 0 {
		t.Errorf("cgroups exist while paused: %v", dirs)
	}
	frozen, err := strconv.Atoi(strings.TrimSpace(d.readFileHost(sb.ID, "count")))
	if err != nil {
		t.Fatal(err)
	}
	// Reading the record does not resume it (a toolbox call would: see
	// TestAutoPauseAndLazyResume).
	if got, err := d.client.GetSandbox(ctx, "p"); err != nil || got.State != sdk.StatePaused {
		t.Errorf("after a GET: %v, %v; want paused", got, err)
	}
	if _, err := d.client.PauseSandbox(ctx, "p"); err != nil {
		t.Errorf("second pause: %v", err)
	}

	resumed, err := d.client.ResumeSandbox(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	if resumed.State != sdk.StateStarted {
		t.Fatalf("state %s after resume", resumed.State)
	}
	if n := d.count("p"); n < frozen || n > frozen+100 {
		t.Errorf("counter %d after resume, want it to go on from %d", n, frozen)
	}
	d.checkWorkload("p", nonce, frozen)

	// The daemon can die while a sandbox is paused.
	if _, err := d.client.PauseSandbox(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	d.kill9()
	d.start()
	if got, err := d.client.GetSandbox(ctx, "p"); err != nil || got.State != sdk.StatePaused {
		t.Fatalf("after a daemon restart: %v, %v; want paused", got, err)
	}
	if _, err := d.client.ResumeSandbox(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	d.checkWorkload("p", nonce, frozen)
}

// readFileHost reads a file of a stopped or paused sandbox from its upper dir.
func (d *daemon) readFileHost(id, name string) string {
	b, _ := os.ReadFile(filepath.Join(d.dataDir, "sandboxes", id, "upper", "workspace", name))
	return string(b)
}

// TestGVisorCheckpointRefused: a process holding a unix socket on the
// sandbox's disk (a host socket under runsc) cannot be saved; the pause is
// refused and the sandbox runs on. A socket on tmpfs is fine.
func TestGVisorCheckpointRefused(t *testing.T) {
	d := gvisorDaemon(t)
	ctx := context.Background()
	d.create(sdk.CreateSandboxRequest{Name: "s", Class: "gvisor"})
	f, err := os.Open(memcheckBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := d.client.Upload(ctx, "s", "/workspace/memcheck", f, 0o755); err != nil {
		t.Fatal(err)
	}
	d.exec("s", `cd /workspace && (./memcheck listen /workspace/app.sock > /dev/null 2>&1 & echo $! > app.pid) && (./memcheck listen /tmp/ok.sock > /dev/null 2>&1 &)`)
	waitFor(t, 30*time.Second, "the sockets", func() bool {
		return d.exec("s", "ls /workspace/app.sock /tmp/ok.sock 2>/dev/null | wc -l") == "2"
	})
	_, err = d.client.PauseSandbox(ctx, "s")
	if apiCode(err) != "CHECKPOINT_REFUSED" || !strings.Contains(err.Error(), "/workspace/app.sock") {
		t.Fatalf("pause: %v, want CHECKPOINT_REFUSED naming /workspace/app.sock", err)
	}
	if got := d.exec("s", "echo alive"); got != "alive" {
		t.Fatalf("after a refused pause: %q", got)
	}
	d.exec("s", "kill $(cat /workspace/app.pid)")
	waitFor(t, 30*time.Second, "the disk socket to close", func() bool {
		return !strings.Contains(d.exec("s", "cat /proc/net/unix"), "app.sock")
	})
	if _, err := d.client.PauseSandbox(ctx, "s"); err != nil {
		t.Fatalf("pause with a socket on tmpfs only: %v", err)
	}
	if _, err := d.client.ResumeSandbox(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.exec("s", "cat /proc/net/unix"), "/tmp/ok.sock") {
		t.Error("the tmpfs socket did not survive the pause")
	}
}

// TestGVisorFork forks a busy sandbox twice over: every fork runs the
// parent's processes with intact memory, and no fork sees another's writes.
func TestGVisorFork(t *testing.T) {
	d := gvisorDaemon(t)
	ctx := context.Background()
	parent := d.create(sdk.CreateSandboxRequest{Name: "parent", Class: "gvisor"})
	d.startWorkload("parent")
	nonce := d.verify("parent").nonce
	d.exec("parent", "echo before > /workspace/shared")
	at := d.count("parent")

	res, err := d.client.ForkSandbox(ctx, "parent", sdk.ForkRequest{Name: "kid", Count: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Memory || len(res.Forks) != 2 || res.Forks[0].Name != "kid-1" || res.Forks[1].Name != "kid-2" {
		t.Fatalf("fork = %+v", res)
	}
	for _, f := range res.Forks {
		d.created[f.ID] = true
		if f.State != sdk.StateStarted || f.Parent != parent.ID || f.Class != "gvisor" {
			t.Errorf("fork %s: state %s parent %s class %s", f.Name, f.State, f.Parent, f.Class)
		}
	}
	for _, sb := range []string{"kid-1", "kid-2", "parent"} {
		d.checkWorkload(sb, nonce, at)
		if got := d.exec(sb, "cat /workspace/shared"); got != "before" {
			t.Errorf("%s: shared = %q", sb, got)
		}
	}
	// Writes stay where they were made.
	for _, sb := range []string{"kid-1", "kid-2", "parent"} {
		d.exec(sb, "echo "+sb+" > /workspace/shared; echo x > /workspace/only-"+sb)
	}
	for _, sb := range []string{"kid-1", "kid-2", "parent"} {
		if got := d.exec(sb, "cat /workspace/shared; ls /workspace | grep only-"); got != sb+"\nonly-"+sb {
			t.Errorf("%s sees %q", sb, got)
		}
	}

	// Lineage.
	grand, err := d.client.ForkSandbox(ctx, "kid-1", sdk.ForkRequest{Name: "grandkid"})
	if err != nil {
		t.Fatal(err)
	}
	d.created[grand.Forks[0].ID] = true
	forks, err := d.client.ListForks(ctx, "parent")
	if err != nil || len(forks) != 2 {
		t.Fatalf("forks of parent: %v, %v", forks, err)
	}
	anc, err := d.client.ListAncestors(ctx, "grandkid")
	if err != nil || len(anc) != 2 || anc[0].Name != "kid-1" || anc[1].Name != "parent" {
		t.Fatalf("ancestors of grandkid: %v, %v", anc, err)
	}
	if p, err := d.client.GetParent(ctx, "kid-2"); err != nil || p.ID != parent.ID {
		t.Fatalf("parent of kid-2: %v, %v", p, err)
	}
	if _, err := d.client.GetParent(ctx, "parent"); apiCode(err) != "NO_PARENT" {
		t.Errorf("parent of parent: %v", err)
	}
	if err := d.client.DeleteSandbox(ctx, "kid-1", true); apiCode(err) != "SANDBOX_HAS_FORKS" {
		t.Fatalf("delete kid-1: %v, want SANDBOX_HAS_FORKS", err)
	}
	if err := d.client.DeleteSandboxCascade(ctx, "parent", true); err != nil {
		t.Fatal(err)
	}
	if list, _ := d.client.ListSandboxes(ctx, sdk.ListOptions{}); len(list) != 0 {
		t.Errorf("left after a cascade delete: %d sandboxes", len(list))
	}
}

// TestGVisorMemorySnapshot: sandboxes made from a memory snapshot start with
// the snapshot's processes running.
func TestGVisorMemorySnapshot(t *testing.T) {
	d := gvisorDaemon(t)
	ctx := context.Background()
	d.create(sdk.CreateSandboxRequest{Name: "src", Class: "gvisor"})
	d.startWorkload("src")
	nonce := d.verify("src").nonce
	at := d.count("src")
	snap, err := d.client.CreateSnapshot(ctx, "src", sdk.CreateSnapshotRequest{Name: "warm", IncludeMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	if !snap.Memory || snap.Class != "gvisor" || snap.SizeBytes < 64<<20 {
		t.Errorf("snapshot = %+v", snap)
	}
	if got, _ := d.client.GetSandbox(ctx, "src"); got.State != sdk.StateStarted {
		t.Errorf("source is %s after the snapshot, want started", got.State)
	}
	for _, name := range []string{"warm-1", "warm-2"} {
		sb := d.create(sdk.CreateSandboxRequest{Name: name, Snapshot: "warm"})
		if sb.Class != "gvisor" || sb.Snapshot != "warm" {
			t.Errorf("%s: class %s snapshot %s", name, sb.Class, sb.Snapshot)
		}
		d.checkWorkload(name, nonce, at)
	}
	d.checkWorkload("src", nonce, at)

	// The snapshot can go; its sandboxes stay.
	if err := d.client.DeleteSnapshot(ctx, "warm"); err != nil {
		t.Fatal(err)
	}
	if got := d.exec("warm-1", "cat /workspace/www/index.html"); got != "served" {
		t.Errorf("after deleting the snapshot: %q", got)
	}
	_, err = d.client.CreateSandbox(ctx, sdk.CreateSandboxRequest{Snapshot: "warm"})
	if apiCode(err) != "SNAPSHOT_NOT_FOUND" {
		t.Errorf("create from a deleted snapshot: %v", err)
	}
}

func apiCode(err error) string {
	if e, ok := err.(*sdk.APIError); ok {
		return string(e.Code)
	}
	if err == nil {
		return ""
	}
	return "not an API error: " + err.Error()
}
