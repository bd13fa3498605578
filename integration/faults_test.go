package integration

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// Faults: the daemon killed mid-operation, instances dying, a full disk, an
// out-of-memory kill, a crash under write load. After each, every sandbox is
// in a state a user can act on and nothing leaked.

// TestKill9DuringOperations kills the daemon while 50 operations (create,
// exec, upload, stop, delete) are in flight. After a restart every sandbox
// is started with a working exec, or stopped — never stuck in a transitional
// state; everything acknowledged before the crash holds (files, creates,
// stops, deletes); and no instance, mount, cgroup or process is left that no
// sandbox owns.
func TestKill9DuringOperations(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	const base = 10
	for i := range base {
		d.create(sdk.CreateSandboxRequest{Name: fmt.Sprintf("s%d", i)})
		if _, err := d.client.Upload(ctx, fmt.Sprintf("s%d", i), "/workspace/pre", strings.NewReader(fmt.Sprintf("pre-%d", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Operation i acts on sandbox s(i%10): 0,5 are left alone; 1,6 get
	// execs; 2,7 uploads; 3,8 stops; 4,9 deletes; and every fifth operation
	// creates a new sandbox n<i>.
	type op struct {
		kind, target string
		acked        bool
		id           string // of a created sandbox
	}
	ops := make([]op, 50)
	done := make([]atomic.Bool, len(ops))
	var finished atomic.Int32
	var wg sync.WaitGroup
	for i := range ops {
		target := fmt.Sprintf("s%d", i%base)
		switch i % 5 {
		case 0:
			ops[i] = op{kind: "create", target: fmt.Sprintf("n%d", i)}
		case 1:
			ops[i] = op{kind: "exec", target: target}
		case 2:
			ops[i] = op{kind: "upload", target: target}
		case 3:
			ops[i] = op{kind: "stop", target: target}
		case 4:
			ops[i] = op{kind: "delete", target: target}
		}
		wg.Go(func() {
			defer finished.Add(1)
			var err error
			switch ops[i].kind {
			case "create":
				var sb *sdk.Sandbox
				if sb, err = d.client.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: ops[i].target}); err == nil {
					ops[i].id = sb.ID
				}
			case "exec":
				var res *sdk.ExecResult
				res, err = d.client.Exec(ctx, target, sdk.ExecRequest{Shell: fmt.Sprintf("echo exec-%d > /workspace/exec-%d", i, i)})
				if err == nil && res.ExitCode != 0 {
					err = fmt.Errorf("exit %d", res.ExitCode)
				}
			case "upload":
				_, err = d.client.Upload(ctx, target, fmt.Sprintf("/workspace/up-%d", i), strings.NewReader(fmt.Sprintf("up-%d", i)), 0o644)
			case "stop":
				_, err = d.client.StopSandbox(ctx, target, sdk.StopOptions{})
			case "delete":
				err = d.client.DeleteSandbox(ctx, target, true)
			}
			ops[i].acked = err == nil
			done[i].Store(true)
		})
	}
	// Kill once every kind of operation has finished at least once (so each
	// has acknowledgements to check) while others are still in flight.
	waitFor(t, 180*time.Second, "one operation of each kind to finish", func() bool {
		kinds := map[string]bool{}
		for i := range ops {
			if done[i].Load() {
				kinds[ops[i].kind] = true
			}
		}
		return len(kinds) == 5 || finished.Load() >= 40
	})
	d.kill9()
	wg.Wait() // the rest fail: the daemon is gone
	for _, o := range ops {
		if o.id != "" {
			d.created[o.id] = true
		}
	}
	d.start()

	list, err := d.client.ListSandboxes(ctx, sdk.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]sdk.Sandbox{}
	for _, sb := range list {
		byName[sb.Name] = sb
		switch sb.State {
		case sdk.StateStarted:
			if res, err := d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Cmd: []string{"true"}}); err != nil || res.ExitCode != 0 {
				t.Errorf("%s is started but exec fails: %+v, %v", sb.Name, res, err)
			}
		case sdk.StateStopped:
		default:
			t.Errorf("%s is %s (%s: %s) after the restart", sb.Name, sb.State, sb.Reason, sb.Error)
		}
	}
	// read starts a stopped sandbox if need be and reads a file.
	read := func(name, path string) string {
		t.Helper()
		if sb := byName[name]; sb.State == sdk.StateStopped {
			if _, err := d.client.StartSandbox(ctx, name); err != nil {
				t.Errorf("start %s: %v", name, err)
				return ""
			}
		}
		rc, err := d.client.Download(ctx, name, path)
		if err != nil {
			return "error: " + err.Error()
		}
		defer rc.Close()
		b, _ := io.ReadAll(rc)
		return string(b)
	}
	acked := map[string]int{}
	for i, o := range ops {
		if !o.acked {
			continue
		}
		acked[o.kind]++
		_, exists := byName[o.target]
		switch o.kind {
		case "create":
			if !exists {
				t.Errorf("acknowledged create of %s is gone", o.target)
			}
		case "delete":
			if exists {
				t.Errorf("acknowledged delete of %s: it is back (%s)", o.target, byName[o.target].State)
			}
		case "stop":
			if sb, ok := byName[o.target]; ok && sb.State != sdk.StateStopped {
				t.Errorf("acknowledged stop of %s: it is %s", o.target, sb.State)
			}
		case "upload":
			if got := read(o.target, fmt.Sprintf("/workspace/up-%d", i)); got != fmt.Sprintf("up-%d", i) {
				t.Errorf("acknowledged upload %d to %s: %q", i, o.target, got)
			}
		case "exec":
			if got := read(o.target, fmt.Sprintf("/workspace/exec-%d", i)); got != fmt.Sprintf("exec-%d\n", i) {
				t.Errorf("acknowledged exec %d in %s: %q", i, o.target, got)
			}
		}
	}
	t.Logf("acknowledged before the crash: %v of %d", acked, len(ops))
	// Files written before the operations began are intact wherever the
	// sandbox still exists.
	for i := range base {
		name := fmt.Sprintf("s%d", i)
		if _, ok := byName[name]; ok {
			if got := read(name, "/workspace/pre"); got != fmt.Sprintf("pre-%d", i) {
				t.Errorf("%s: /workspace/pre = %q", name, got)
			}
		}
	}
	d.assertOwnedOnly(d.startedByID())
}

// startedByID maps the id of every sandbox to whether it is started.
func (d *daemon) startedByID() map[string]bool {
	d.t.Helper()
	list, err := d.client.ListSandboxes(context.Background(), sdk.ListOptions{})
	if err != nil {
		d.t.Fatal(err)
	}
	m := map[string]bool{}
	for _, sb := range list {
		m[sb.ID] = sb.State == sdk.StateStarted
	}
	return m
}

// assertOwnedOnly checks, after a crash and restart, that every runc
// container and rootfs mount belongs to a sandbox that is started, every
// sandbox directory to a sandbox that exists, and that no sandbox seen
// before the crash but gone now left a cgroup or process.
func (d *daemon) assertOwnedOnly(started map[string]bool) {
	t := d.t
	t.Helper()
	out, err := exec.Command("runc", "--root", filepath.Join(d.dataDir, "runc"), "list", "-q").Output()
	if err != nil {
		t.Fatalf("runc list: %v", err)
	}
	for _, id := range strings.Fields(string(out)) {
		if !started[id] {
			t.Errorf("runc container %s belongs to no started sandbox", id)
		}
	}
	for _, m := range mountsUnder(filepath.Join(d.dataDir, "sandboxes")) {
		id := strings.SplitN(strings.TrimPrefix(m, filepath.Join(d.dataDir, "sandboxes")+"/"), "/", 2)[0]
		if !started[id] {
			t.Errorf("mount %s belongs to no started sandbox", m)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(d.dataDir, "sandboxes"))
	for _, e := range entries {
		if _, ok := started[e.Name()]; !ok {
			t.Errorf("directory of sandbox %s that no longer exists", e.Name())
		}
	}
	for id := range d.created {
		if _, ok := started[id]; ok {
			continue
		}
		if dirs := leftCgroups(id); len(dirs) > 0 {
			t.Errorf("cgroups of a sandbox that no longer exists: %v", dirs)
		}
		if procs := processesWithFilesUnder(filepath.Join(d.dataDir, "sandboxes", id)); len(procs) > 0 {
			t.Errorf("processes of sandbox %s that no longer exists: %v", id, procs)
		}
	}
}

// TestAgentKill9IsCrash kills only the agent (PID 1), from the host, while a
// workload runs: the kernel takes the rest of the instance down with it, the
// daemon records the sandbox as stopped with reason "crash", nothing of the
// instance is left, and a start brings the files back.
// (TestInstanceCrashIsNoticed kills every process with runc kill --all.)
func TestAgentKill9IsCrash(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{})
	if _, err := d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: "echo kept > /workspace/f; sleep 1000 >/dev/null 2>&1 &"}); err != nil {
		t.Fatal(err)
	}
	pid := d.instancePid(sb.ID)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the sandbox to stop with reason crash", func() bool {
		got, err := d.client.GetSandbox(ctx, sb.ID)
		return err == nil && got.State == sdk.StateStopped && got.Reason == "crash"
	})
	if out, _ := exec.Command("runc", "--root", filepath.Join(d.dataDir, "runc"), "list", "-q").Output(); strings.TrimSpace(string(out)) != "" {
		t.Errorf("runc still lists %s", out)
	}
	// The run directory's tmpfs stays for as long as the sandbox exists
	// (the main process's log outlives its instance); nothing else may.
	runDir := filepath.Join(d.dataDir, "sandboxes", sb.ID, "run")
	for _, m := range mountsUnder(filepath.Join(d.dataDir, "sandboxes")) {
		if m != runDir {
			t.Errorf("mount left after the crash: %s", m)
		}
	}
	if procs := processesWithFilesUnder(filepath.Join(d.dataDir, "sandboxes")); len(procs) > 0 {
		t.Errorf("processes left after the crash: %v", procs)
	}
	if _, err := d.client.StartSandbox(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	res, err := d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: "cat /workspace/f; ps -o args | grep -c '^sleep 1000'"})
	if err != nil || res.Stdout != "kept\n0\n" {
		t.Errorf("after restart: %+v, %v", res, err)
	}
}

// instancePid returns the host pid of a sandbox's agent.
func (d *daemon) instancePid(id string) int {
	d.t.Helper()
	out, err := exec.Command("runc", "--root", filepath.Join(d.dataDir, "runc"), "state", id).Output()
	if err != nil {
		d.t.Fatalf("runc state %s: %v", id, err)
	}
	i := strings.Index(string(out), `"pid":`)
	if i < 0 {
		d.t.Fatalf("runc state %s: no pid in %s", id, out)
	}
	rest := strings.TrimSpace(string(out[i+len(`"pid":`):]))
	end := strings.IndexAny(rest, ",}\n")
	pid, err := strconv.Atoi(strings.TrimSpace(rest[:end]))
	if err != nil || pid <= 0 {
		d.t.Fatalf("runc state %s: pid %q", id, rest[:end])
	}
	return pid
}

// TestFullDiskInsideOneSandbox fills a sandbox that has its own 32 MiB disk
// (diskMiB): writes inside fail with ENOSPC, the file API answers NO_SPACE,
// and the other sandboxes, new creates and the daemon carry on. Freeing
// space makes it writable again; its files survive a stop; delete leaves no
// image, mount or loop device. The host's disk is never at risk: the image
// is a sparse file that cannot grow past 32 MiB.
func TestFullDiskInsideOneSandbox(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	full := d.create(sdk.CreateSandboxRequest{Name: "full", DiskMiB: 32})
	other := d.create(sdk.CreateSandboxRequest{Name: "other"})
	if full.DiskMiB != 32 {
		t.Errorf("diskMiB = %d, want 32", full.DiskMiB)
	}
	run := func(id, shell string) *sdk.ExecResult {
		t.Helper()
		res, err := d.client.Exec(ctx, id, sdk.ExecRequest{Shell: shell})
		if err != nil {
			t.Fatalf("%s: %v", shell, err)
		}
		return res
	}
	// The limit is what the sandbox sees.
	res := run(full.ID, "df -m /workspace | tail -1")
	if f := strings.Fields(res.Stdout); len(f) < 2 || atoi(f[1]) > 32 || atoi(f[1]) < 20 {
		t.Errorf("df inside: %q, want a filesystem of about 32 MiB", res.Stdout)
	}
	if _, err := d.client.Upload(ctx, full.ID, "/workspace/keep", strings.NewReader("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = run(full.ID, "dd if=/dev/zero of=/workspace/fill bs=1M count=100")
	if res.ExitCode == 0 || !strings.Contains(res.Stderr, "No space left") {
		t.Errorf("filling the disk: %+v", res)
	}
	_, err := d.client.Upload(ctx, full.ID, "/workspace/more", io.LimitReader(zeros{}, 4<<20), 0o644)
	var apiErr *sdk.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != "NO_SPACE" || (apiErr.StatusCode != 507 && apiErr.StatusCode != 503) || !strings.Contains(apiErr.Message, "space") {
		t.Errorf("upload to a full disk: %v, want NO_SPACE with 507 or 503", err)
	}
	if list, err := d.client.ListFiles(ctx, full.ID, "/workspace"); err == nil {
		for _, f := range list {
			if f.Name != "keep" && f.Name != "fill" {
				t.Errorf("a failed upload left %s behind", f.Name)
			}
		}
	}
	// Everyone else carries on.
	if _, err := d.client.Upload(ctx, other.ID, "/workspace/big", io.LimitReader(zeros{}, 64<<20), 0o644); err != nil {
		t.Errorf("upload to the other sandbox: %v", err)
	}
	if res := run(other.ID, "echo ok"); res.Stdout != "ok\n" {
		t.Errorf("exec in the other sandbox: %+v", res)
	}
	third := d.create(sdk.CreateSandboxRequest{})
	if res := run(third.ID, "echo ok"); res.Stdout != "ok\n" {
		t.Errorf("exec in a new sandbox: %+v", res)
	}
	// The full one still reads, and recovers once space is freed.
	if res := run(full.ID, "cat /workspace/keep"); res.Stdout != "kept" {
		t.Errorf("read on the full disk: %+v", res)
	}
	run(full.ID, "rm /workspace/fill")
	if _, err := d.client.Upload(ctx, full.ID, "/workspace/more", io.LimitReader(zeros{}, 4<<20), 0o644); err != nil {
		t.Errorf("upload after freeing space: %v", err)
	}
	// The disk is the sandbox's filesystem: it survives a stop.
	if _, err := d.client.StopSandbox(ctx, full.ID, sdk.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	if loops := loopDevicesUnder(d.dataDir); len(loops) > 0 {
		t.Errorf("a stopped sandbox holds loop devices: %v", loops)
	}
	if _, err := d.client.StartSandbox(ctx, full.ID); err != nil {
		t.Fatal(err)
	}
	if res := run(full.ID, "cat /workspace/keep; wc -c < /workspace/more"); res.Stdout != "kept"+strconv.Itoa(4<<20)+"\n" {
		t.Errorf("after stop and start: %q", res.Stdout)
	}
	img := filepath.Join(d.dataDir, "sandboxes", full.ID, "disk.img")
	var st syscall.Stat_t
	if err := syscall.Stat(img, &st); err != nil {
		t.Fatalf("disk image: %v", err)
	}
	if used := st.Blocks * 512; used > 40<<20 {
		t.Errorf("the disk image takes %d bytes on the host, more than its size", used)
	}
	if err := d.client.DeleteSandbox(ctx, full.ID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(img); !os.IsNotExist(err) {
		t.Errorf("the disk image outlived its sandbox: %v", err)
	}
	if loops := loopDevicesUnder(d.dataDir); len(loops) > 0 {
		t.Errorf("loop devices left after delete: %v", loops)
	}
	for _, c := range []struct {
		body string
		code string
	}{{`{"diskMiB":-1}`, "INVALID_DISK"}, {`{"diskMiB":8}`, "INVALID_DISK"}, {`{"diskMiB":"big"}`, "INVALID_JSON"}} {
		if status, e := d.call("POST", "/v1/sandboxes", c.body); status != 400 || string(e.Code) != c.code {
			t.Errorf("%s: %d %s, want 400 %s", c.body, status, e.Code, c.code)
		}
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// TestOOMKillsAgent makes the agent (PID 1) the OOM killer's choice: the
// host raises its oom_score_adj, then a process inside allocates past
// memoryMiB. The kernel kills the agent, the instance goes down, and the
// daemon records the sandbox as stopped with reason "oom"; it starts again
// with its files, and the daemon and other sandboxes are unaffected.
// (When the OOM killer picks an ordinary process instead — the usual case,
// TestMemoryBomb — the sandbox stays started and the exec reports SIGKILL.)
func TestOOMKillsAgent(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{Name: "oom", MemoryMiB: 64})
	other := d.create(sdk.CreateSandboxRequest{Name: "bystander"})
	if _, err := d.client.Upload(ctx, sb.ID, "/workspace/kept", strings.NewReader("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The bomb's shell is forked before the agent's score goes up, so the
	// bomb keeps the default score; it waits for /tmp/go, then allocates.
	if _, err := d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: `
		(while [ ! -e /tmp/go ]; do sleep 0.05; done; exec dd if=/dev/zero of=/dev/null bs=256M count=1) >/dev/null 2>&1 &`}); err != nil {
		t.Fatal(err)
	}
	pid := d.instancePid(sb.ID)
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/oom_score_adj", pid), []byte("1000"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := d.client.Upload(ctx, sb.ID, "/tmp/go", strings.NewReader(""), 0o644); err != nil {
		t.Fatal(err)
	}
	var got *sdk.Sandbox
	waitFor(t, 60*time.Second, "the sandbox to stop", func() bool {
		var err error
		got, err = d.client.GetSandbox(ctx, sb.ID)
		return err == nil && got.State == sdk.StateStopped
	})
	if got.Reason != "oom" {
		t.Errorf("stopped with reason %q (%s), want oom", got.Reason, got.Error)
	}
	if res, err := d.client.Exec(ctx, other.ID, sdk.ExecRequest{Shell: "echo ok"}); err != nil || res.Stdout != "ok\n" {
		t.Errorf("bystander: %+v, %v", res, err)
	}
	if _, err := d.client.StartSandbox(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	if res, err := d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Cmd: []string{"cat", "/workspace/kept"}}); err != nil || res.Stdout != "kept" {
		t.Errorf("after the OOM: %+v, %v", res, err)
	}
}

// TestAcknowledgedCreatesSurviveKill9 kills the daemon while creates pour
// in: every create that got its answer is in the store after the restart
// (SQLite commits before the answer), and the rest were rolled back or
// finished — none is half made.
func TestAcknowledgedCreatesSurviveKill9(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	var (
		mu    sync.Mutex
		acked []string
		ids   []string
		wg    sync.WaitGroup
		stop  atomic.Bool
	)
	for w := range 6 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				sb, err := d.client.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: fmt.Sprintf("w%d-%d", w, i), Labels: map[string]string{"worker": strconv.Itoa(w)}})
				if err != nil {
					return // the daemon is gone
				}
				mu.Lock()
				acked = append(acked, sb.Name)
				ids = append(ids, sb.ID)
				mu.Unlock()
			}
		})
	}
	waitFor(t, 120*time.Second, "12 acknowledged creates", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) >= 12
	})
	d.kill9()
	stop.Store(true)
	wg.Wait()
	for _, id := range ids {
		d.created[id] = true
	}
	d.start()
	list, err := d.client.ListSandboxes(ctx, sdk.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]sdk.Sandbox{}
	started := map[string]bool{}
	for _, sb := range list {
		have[sb.Name] = sb
		started[sb.ID] = sb.State == sdk.StateStarted
		if sb.State != sdk.StateStarted && sb.State != sdk.StateStopped {
			t.Errorf("%s is %s after the restart", sb.Name, sb.State)
		}
	}
	for _, name := range acked {
		if sb, ok := have[name]; !ok {
			t.Errorf("acknowledged create %s is gone", name)
		} else if sb.State != sdk.StateStarted {
			t.Errorf("acknowledged create %s is %s (%s)", name, sb.State, sb.Reason)
		}
	}
	t.Logf("%d creates acknowledged, %d sandboxes after the restart", len(acked), len(list))
	d.assertOwnedOnly(started)
}

// TestFrozenAgentDoesNotJamTheDaemon stops agents from the host with SIGSTOP,
// as code inside could by ptracing PID 1: they accept connections and never
// answer. A graceful stop still ends (the instance killed), force-stop and
// delete ?wait=true are not held up behind it, and sandboxes whose agents
// are frozen while the scheduler idle-stops them do not keep another
// sandbox's TTL from firing.
func TestFrozenAgentDoesNotJamTheDaemon(t *testing.T) {
	d := startDaemon(t)
	// Every call is bounded so that a jammed daemon fails the test rather
	// than hanging it.
	bounded := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), 90*time.Second)
	}
	stopping := d.create(sdk.CreateSandboxRequest{KeepAlive: true})
	deleting := d.create(sdk.CreateSandboxRequest{KeepAlive: true})
	d.freezeAgent(stopping.ID)
	d.freezeAgent(deleting.ID)
	// More frozen sandboxes due for an idle stop than the scheduler has
	// workers (maxDueActions = 4), due before the TTL below.
	var idle []*sdk.Sandbox
	for range 5 {
		sb := d.create(sdk.CreateSandboxRequest{AutoStopSeconds: sdk.Ptr(5)})
		d.freezeAgent(sb.ID)
		idle = append(idle, sb)
	}
	ttl := d.create(sdk.CreateSandboxRequest{TTLSeconds: 5})
	execing := d.create(sdk.CreateSandboxRequest{KeepAlive: true})
	d.freezeAgent(execing.ID)

	// A graceful stop of a frozen agent, and force-stop and delete while it runs.
	type result struct {
		sb  *sdk.Sandbox
		err error
	}
	graceful := make(chan result, 2)
	for _, sb := range []*sdk.Sandbox{stopping, deleting} {
		go func() {
			ctx, cancel := bounded()
			defer cancel()
			got, err := d.client.StopSandbox(ctx, sb.ID, sdk.StopOptions{})
			graceful <- result{got, err}
		}()
		waitFor(t, 30*time.Second, "a graceful stop to begin", func() bool {
			got, err := d.client.GetSandbox(context.Background(), sb.ID)
			return err == nil && got.State != sdk.StateStarted
		})
	}
	ctx, cancel := bounded()
	defer cancel()
	if got, err := d.client.StopSandbox(ctx, stopping.ID, sdk.StopOptions{Force: true}); err != nil || got.State != sdk.StateStopped {
		t.Errorf("force stop of a frozen sandbox: %+v, %v", got, err)
	}
	if err := d.client.DeleteSandbox(ctx, deleting.ID, true); err != nil && !sdk.IsNotFound(err) {
		t.Errorf("delete ?wait=true of a frozen sandbox: %v", err)
	}
	if _, err := d.client.GetSandbox(ctx, deleting.ID); !sdk.IsNotFound(err) {
		t.Errorf("deleted sandbox still there: %v", err)
	}
	for range 2 {
		if r := <-graceful; r.err != nil && !sdk.IsNotFound(r.err) {
			t.Errorf("graceful stop of a frozen sandbox: %+v, %v", r.sb, r.err)
		}
	}
	d.assertInstanceGone(stopping.ID)

	waitFor(t, 60*time.Second, "the TTL to delete its sandbox", func() bool {
		_, err := d.client.GetSandbox(context.Background(), ttl.ID)
		return sdk.IsNotFound(err)
	})
	for _, sb := range idle {
		if got := d.waitState(sb.ID, sdk.StateStopped, 60*time.Second); got.Reason != "idle" {
			t.Errorf("frozen idle sandbox stopped with reason %q, want idle", got.Reason)
		}
		d.assertInstanceGone(sb.ID)
	}

	// An exec with a timeout gives up on the silent agent soon after the
	// timeout instead of waiting for as long as the client does.
	for _, stream := range []bool{false, true} {
		ctx, cancel := bounded()
		req := sdk.ExecRequest{Cmd: []string{"sleep", "60"}, TimeoutSeconds: 1}
		var err error
		if stream {
			var res *sdk.ExecResult
			res, err = d.client.ExecStream(ctx, execing.ID, req, io.Discard, io.Discard)
			if err == nil {
				err = fmt.Errorf("exit %+v", res)
			}
		} else {
			_, err = d.client.Exec(ctx, execing.ID, req)
		}
		if ctx.Err() != nil || err == nil {
			t.Errorf("exec (stream %v) with timeoutSeconds on a frozen agent: %v (client deadline hit: %v)", stream, err, ctx.Err())
		}
		cancel()
	}
}

// freezeAgent stops a sandbox's agent with SIGSTOP. Cleanup resumes it if it
// still runs, so that a failing test can still clean up.
func (d *daemon) freezeAgent(id string) {
	d.t.Helper()
	pid := d.instancePid(id)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(func() {
		out, err := exec.Command("runc", "--root", filepath.Join(d.dataDir, "runc"), "state", id).Output()
		if err == nil && strings.Contains(string(out), fmt.Sprintf(`"pid": %d,`, pid)) {
			syscall.Kill(pid, syscall.SIGCONT)
		}
	})
}

// assertInstanceGone checks that the runtime knows no instance of id.
func (d *daemon) assertInstanceGone(id string) {
	d.t.Helper()
	if out, err := exec.Command("runc", "--root", filepath.Join(d.dataDir, "runc"), "state", id).CombinedOutput(); err == nil {
		d.t.Errorf("instance of %s still there: %s", id, out)
	}
}
