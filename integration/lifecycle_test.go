package integration

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/webhook"
	"github.com/sbxhq/sbx/sdk"
)

// Lifecycle tests use intervals of a few seconds. None sleeps to wait: each
// waits for a state with the daemon's wait route or polls a condition. To
// show that something did NOT happen (keep-alive, an open stream), a
// sandbox with the same interval created later serves as the clock.

// waitState waits for a sandbox's state through POST …/wait.
func (d *daemon) waitState(ref string, state sdk.State, timeout time.Duration) *sdk.Sandbox {
	d.t.Helper()
	sb, err := d.client.WaitForState(context.Background(), ref, state, timeout)
	if err != nil {
		got, _ := d.client.GetSandbox(context.Background(), ref)
		d.t.Fatalf("wait for %s to be %s: %v (now %+v)", ref, state, err, got)
	}
	return sb
}

// events returns a sandbox's events as "state/reason" strings.
func (d *daemon) eventTrail(ref string) []string {
	d.t.Helper()
	evs, err := d.client.ListEvents(context.Background(), ref, sdk.EventOptions{})
	if err != nil {
		d.t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, string(e.State)+"/"+e.Reason)
	}
	return out
}

func count(list []string, s string) int {
	n := 0
	for _, v := range list {
		if v == s {
			n++
		}
	}
	return n
}

func TestIdleStopAndKeepAlive(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	kept := d.create(sdk.CreateSandboxRequest{Name: "kept", AutoStopSeconds: sdk.Ptr(2), KeepAlive: true})
	idle := d.create(sdk.CreateSandboxRequest{Name: "idle", AutoStopSeconds: sdk.Ptr(2)})
	if idle.ExpiresAt == nil || idle.ExpiresAction != "stop" || idle.LastActivityAt == nil {
		t.Fatalf("idle sandbox without a stop deadline: %+v", idle)
	}
	if kept.ExpiresAt != nil {
		t.Errorf("keep-alive sandbox has a deadline: %v %s", kept.ExpiresAt, kept.ExpiresAction)
	}
	// Activity moves the deadline.
	if _, err := d.client.Exec(ctx, "idle", sdk.ExecRequest{Cmd: []string{"true"}}); err != nil {
		t.Fatal(err)
	}
	got, err := d.client.GetSandbox(ctx, "idle")
	if err != nil || !got.ExpiresAt.After(*idle.ExpiresAt) {
		t.Errorf("exec did not move the deadline: %v -> %v (%v)", idle.ExpiresAt, got.ExpiresAt, err)
	}

	stopped := d.waitState("idle", sdk.StateStopped, 30*time.Second)
	if stopped.Reason != "idle" {
		t.Errorf("stop reason %q, want idle", stopped.Reason)
	}
	if stopped.StoppedAt != nil {
		t.Logf("stopped %s after its deadline (graceful stop included)", stopped.StoppedAt.Sub(*got.ExpiresAt))
	}
	// The same path as a user stop: stopping, then stopped, both "idle".
	if trail := d.eventTrail("idle"); count(trail, "stopping/idle") != 1 || count(trail, "stopped/idle") != 1 {
		t.Errorf("events of the idle sandbox: %v", trail)
	}
	// kept was created first with the same interval: it would be stopped too.
	if got, err := d.client.GetSandbox(ctx, "kept"); err != nil || got.State != sdk.StateStarted {
		t.Errorf("keep-alive sandbox: %+v, %v", got, err)
	}

	// Changing the policy of a running sandbox takes effect: drop keep-alive.
	upd, err := d.client.UpdateSandbox(ctx, "kept", sdk.UpdateSandboxRequest{KeepAlive: sdk.Ptr(false)})
	if err != nil || upd.KeepAlive || upd.ExpiresAction != "stop" {
		t.Fatalf("update = %+v, %v", upd, err)
	}
	if d.waitState("kept", sdk.StateStopped, 30*time.Second).Reason != "idle" {
		t.Error("kept did not stop for idleness after keep-alive was dropped")
	}
	// A stopped sandbox's next deadline is its archive.
	if got, _ := d.client.GetSandbox(ctx, "kept"); got.ExpiresAction != "archive" {
		t.Errorf("stopped sandbox's next action %q, want archive", got.ExpiresAction)
	}

	// Bad updates change nothing.
	for _, body := range []string{`{"autoStopSeconds": -5}`, `{"autoArchiveSeconds": 99999999}`, `{"ttl": 5}`, `{"ephemeral": true, "autoDeleteSeconds": 60}`} {
		if status, e := d.call("PATCH", "/v1/sandboxes/kept", body); status != http.StatusBadRequest {
			t.Errorf("PATCH %s: status %d (%+v), want 400", body, status, e)
		}
	}
}

// An open stream keeps a sandbox active for as long as it is open: here a
// log follow of the main process, which also shows that its output is kept.
func TestOpenStreamPreventsIdleStop(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	d.create(sdk.CreateSandboxRequest{Name: "served", AutoStopSeconds: sdk.Ptr(2),
		Entrypoint: []string{"/bin/sh", "-c", "while true; do echo tick; sleep 0.5; done"}})
	followCtx, stopFollowing := context.WithCancel(ctx)
	defer stopFollowing()
	logs := &lockedBuffer{}
	followed := make(chan error, 1)
	go func() { followed <- d.client.MainLogs(followCtx, "served", true, logs) }()
	waitFor(t, 10*time.Second, "main process output", func() bool { return strings.Contains(logs.String(), "tick") })

	d.create(sdk.CreateSandboxRequest{Name: "clock", AutoStopSeconds: sdk.Ptr(2)})
	d.waitState("clock", sdk.StateStopped, 30*time.Second)
	if got, err := d.client.GetSandbox(ctx, "served"); err != nil || got.State != sdk.StateStarted {
		t.Fatalf("sandbox with an open log follow: %+v, %v", got, err)
	}

	stopFollowing()
	<-followed
	if d.waitState("served", sdk.StateStopped, 30*time.Second).Reason != "idle" {
		t.Error("not stopped for idleness once the follow closed")
	}
	// The log outlives the instance.
	var after strings.Builder
	if err := d.client.MainLogs(ctx, "served", false, &after); err != nil || !strings.Contains(after.String(), "tick\n") {
		t.Errorf("logs after stop: %q, %v", after.String(), err)
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *lockedBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *lockedBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestTTLAndEphemeralDelete(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	ttl := d.create(sdk.CreateSandboxRequest{Name: "ttl", TTLSeconds: 2})
	if ttl.ExpiresAction != "delete" || ttl.TTLFrom == nil {
		t.Errorf("ttl sandbox: %+v", ttl)
	}
	eph := d.create(sdk.CreateSandboxRequest{Name: "eph", Ephemeral: true})
	if eph.AutoDeleteSeconds != 0 || !eph.Ephemeral {
		t.Errorf("ephemeral sandbox: %+v", eph)
	}

	// The TTL deletes a started sandbox.
	gone := d.waitState(ttl.ID, sdk.StateDeleted, 30*time.Second)
	if gone.ID != ttl.ID {
		t.Errorf("wait for deleted = %+v", gone)
	}
	if _, err := d.client.GetSandbox(ctx, ttl.ID); !sdk.IsNotFound(err) {
		t.Errorf("ttl sandbox still there: %v", err)
	}

	// An ephemeral sandbox goes when it stops.
	if _, err := d.client.StopSandbox(ctx, "eph", sdk.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	d.waitState(eph.ID, sdk.StateDeleted, 30*time.Second)

	// Both deletions are in the global stream, with their reasons, though
	// the sandboxes' own records are gone.
	all, err := d.client.ListEvents(ctx, "", sdk.EventOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, e := range all {
		if e.State == sdk.StateDeleted {
			reasons[e.SandboxName] = e.Reason
		}
	}
	if reasons["ttl"] != "ttl" || reasons["eph"] != "auto-delete" {
		t.Errorf("deleted events: %v", reasons)
	}
	d.assertNoLeaks()
}

// treeScript builds a tree with everything an archive must keep.
const treeScript = `set -e
mkdir -p /workspace/tree/a/b/empty /workspace/tree/private
cd /workspace/tree
dd if=/dev/urandom of=big bs=1M count=50 2>/dev/null
ln big hard
ln -s a/b dirlink
ln -s /nonexistent dangling
echo hi > a/b/file
chown 1234:5678 a/b/file
chmod 4755 a/b/file
chmod 0750 private
chmod 1777 a
echo secret > private/x
chmod 0600 private/x
mkfifo a/fifo
touch -t 200102030405.06 a/b/file
rm /etc/group
rm -rf /root && mkdir /root && echo r > /root/new
`

// manifestScript describes the tree: names, types, modes, owners, sizes,
// times, link targets, link counts and contents.
const manifestScript = `cd /workspace/tree && find . | sort | while read f; do
  if [ -L "$f" ]; then echo "$f L $(readlink "$f") $(stat -c '%u:%g' "$f")"
  elif [ -d "$f" ]; then echo "$f D $(stat -c '%a %u:%g' "$f")"
  elif [ -p "$f" ]; then echo "$f P $(stat -c '%a %u:%g %Y' "$f")"
  else echo "$f F $(stat -c '%a %u:%g %s %h %Y' "$f") $(sha256sum < "$f" | cut -d' ' -f1)"; fi
done
[ "$(stat -c %i big)" = "$(stat -c %i hard)" ] && echo "hard link kept"
[ -e /etc/group ] || echo "/etc/group stays deleted"
echo "/root: $(ls -A /root)"`

func TestArchiveRestoresEverything(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{Name: "arch"})
	if res, err := d.client.Exec(ctx, "arch", sdk.ExecRequest{Shell: treeScript}); err != nil || res.ExitCode != 0 {
		t.Fatalf("build tree: %+v, %v", res, err)
	}
	before, err := d.client.Exec(ctx, "arch", sdk.ExecRequest{Shell: manifestScript})
	if err != nil || before.ExitCode != 0 || !strings.Contains(before.Stdout, "hard link kept") {
		t.Fatalf("manifest: %+v, %v", before, err)
	}

	// A started sandbox cannot be archived.
	if _, err := d.client.ArchiveSandbox(ctx, "arch"); !sdk.IsConflict(err) {
		t.Errorf("archive of a started sandbox: %v, want conflict", err)
	}
	if _, err := d.client.StopSandbox(ctx, "arch", sdk.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	archived, err := d.client.ArchiveSandbox(ctx, "arch")
	t.Logf("archive of a 50 MiB tree took %s", time.Since(began))
	if err != nil || archived.State != sdk.StateArchived {
		t.Fatalf("archive = %+v, %v", archived, err)
	}
	root := filepath.Join(d.dataDir, "sandboxes", sb.ID)
	blob := filepath.Join(d.dataDir, "blobs", "sandboxes", sb.ID, "upper.tar.zst")
	if _, err := os.Stat(filepath.Join(root, "upper")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the local files are still there after archiving: %v", err)
	}
	if fi, err := os.Stat(blob); err != nil || fi.Size() < 50<<20 {
		t.Fatalf("archive blob: %v %v", fi, err)
	}

	began = time.Now()
	started, err := d.client.StartSandbox(ctx, "arch")
	t.Logf("restore and start took %s", time.Since(began))
	if err != nil || started.State != sdk.StateStarted {
		t.Fatalf("start of an archived sandbox = %+v, %v", started, err)
	}
	after, err := d.client.Exec(ctx, "arch", sdk.ExecRequest{Shell: manifestScript})
	if err != nil || after.Stdout != before.Stdout {
		t.Errorf("restored tree differs (%v)\nbefore:\n%s\nafter:\n%s", err, before.Stdout, after.Stdout)
	}
	for _, want := range []string{"/etc/group stays deleted", "/root: new", "./big F 644 0:0 52428800 2"} {
		if !strings.Contains(after.Stdout, want) {
			t.Errorf("restored tree lacks %q:\n%s", want, after.Stdout)
		}
	}
	// The recreated /root is an opaque directory in the upper layer.
	var opaque [8]byte
	n, err := unix.Lgetxattr(filepath.Join(root, "upper", "root"), "trusted.overlay.opaque", opaque[:])
	if err != nil || string(opaque[:n]) != "y" {
		t.Errorf("opaque xattr after restore: %q, %v", opaque[:n], err)
	}
	if _, err := os.Stat(blob); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the archive was not removed after the restore: %v", err)
	}
	if trail := d.eventTrail("arch"); count(trail, "archiving/user") != 1 || count(trail, "archived/user") != 1 || count(trail, "restoring/user") != 1 {
		t.Errorf("events: %v", trail)
	}

	// Deleting an archived sandbox removes its archive too.
	if _, err := d.client.StopSandbox(ctx, "arch", sdk.StopOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.client.ArchiveSandbox(ctx, "arch"); err != nil {
		t.Fatal(err)
	}
	if err := d.client.DeleteSandbox(ctx, "arch", true); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(filepath.Join(d.dataDir, "blobs")); len(entries) != 0 {
		t.Errorf("blobs left after delete: %v", entries)
	}
}

// Twenty toolbox calls at once on an auto-archived sandbox: one restore,
// one instance, and every call succeeds.
func TestConcurrentCallsShareOneRestore(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	d.create(sdk.CreateSandboxRequest{Name: "lazy", AutoArchiveSeconds: sdk.Ptr(1)})
	if _, err := d.client.Exec(ctx, "lazy", sdk.ExecRequest{Shell: "echo kept > /workspace/f"}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.client.StopSandbox(ctx, "lazy", sdk.StopOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if sb := d.waitState("lazy", sdk.StateArchived, 30*time.Second); sb.Reason != "auto-archive" {
		t.Errorf("archive reason %q, want auto-archive", sb.Reason)
	}

	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			res, err := d.client.Exec(ctx, "lazy", sdk.ExecRequest{Shell: "cat /workspace/f; echo $$ > /dev/null"})
			if err == nil && res.Stdout != "kept\n" {
				err = errors.New("exec saw " + res.Stdout)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	trail := d.eventTrail("lazy")
	if count(trail, "restoring/lazy") != 1 || count(trail, "started/lazy") != 1 {
		t.Errorf("want exactly one restore and one start: %v", trail)
	}
	out, _ := exec.Command("runc", "--root", filepath.Join(d.dataDir, "runc"), "list", "-q").Output()
	if n := len(strings.Fields(string(out))); n != 1 {
		t.Errorf("%d instances after concurrent lazy starts, want 1", n)
	}
}

// A deadline that passes while the daemon is down fires once it is back.
func TestDeadlineMissedWhileDown(t *testing.T) {
	d := startDaemon(t)
	sb := d.create(sdk.CreateSandboxRequest{Name: "late", AutoStopSeconds: sdk.Ptr(2)})
	d.kill9()
	waitFor(t, 10*time.Second, "the deadline to pass while the daemon is down", func() bool {
		return time.Now().After(sb.ExpiresAt.Add(time.Second))
	})
	d.start()
	if got := d.waitState("late", sdk.StateStopped, 30*time.Second); got.Reason != "idle" {
		t.Errorf("stop reason %q, want idle", got.Reason)
	}
	if trail := d.eventTrail("late"); count(trail, "stopping/idle") != 1 {
		t.Errorf("events: %v", trail)
	}
}

func TestMainProcessExitAndRestart(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	// never: the sandbox stops when the main process exits.
	d.create(sdk.CreateSandboxRequest{Name: "once", Entrypoint: []string{"/bin/sh", "-c", "echo hello from main; exit 3"}})
	sb := d.waitState("once", sdk.StateStopped, 30*time.Second)
	if sb.Reason != "main-exit" || !strings.Contains(d.lastMessage("once"), "exited with code 3") {
		t.Errorf("stop = %+v, message %q", sb, d.lastMessage("once"))
	}
	var logs strings.Builder
	if err := d.client.MainLogs(ctx, "once", false, &logs); err != nil || !strings.Contains(logs.String(), "hello from main\n") {
		t.Errorf("logs = %q, %v", logs.String(), err)
	}

	// on-failure: a failing run is restarted; a clean exit then stops it.
	d.create(sdk.CreateSandboxRequest{Name: "retry", RestartPolicy: sdk.RestartOnFailure,
		Entrypoint: []string{"/bin/sh", "-c", "if [ -f /workspace/ran ]; then echo second run; exit 0; fi; touch /workspace/ran; echo first run; exit 1"}})
	if d.waitState("retry", sdk.StateStopped, 30*time.Second).Reason != "main-exit" {
		t.Error("on-failure sandbox did not stop with main-exit")
	}
	logs.Reset()
	d.client.MainLogs(ctx, "retry", false, &logs)
	if !strings.Contains(logs.String(), "first run") || !strings.Contains(logs.String(), "second run") || !strings.Contains(logs.String(), "restarting") {
		t.Errorf("on-failure logs: %q", logs.String())
	}
	// The agent kept when each write happened: tail, since and timestamps
	// select on the daemon.
	lines := strings.SplitAfter(strings.TrimSuffix(logs.String(), "\n"), "\n")
	one := 1
	var tail strings.Builder
	err := d.client.MainLogChunks(ctx, "retry", sdk.MainLogsOptions{Tail: &one, Timestamps: true}, func(data []byte, at *time.Time) error {
		if at == nil || time.Since(*at) > 10*time.Minute || at.After(time.Now()) {
			t.Errorf("chunk %q written at %v", data, at)
		}
		tail.Write(data)
		return nil
	})
	if err != nil || tail.String() != lines[len(lines)-1]+"\n" {
		t.Errorf("tail 1 = %q, %v; want %q", tail.String(), err, lines[len(lines)-1])
	}
	var since strings.Builder
	write := func(data []byte, _ *time.Time) error { since.Write(data); return nil }
	if err := d.client.MainLogChunks(ctx, "retry", sdk.MainLogsOptions{Since: time.Now().Add(time.Minute)}, write); err != nil || since.Len() != 0 {
		t.Errorf("since a minute ahead = %q, %v", since.String(), err)
	}
	if err := d.client.MainLogChunks(ctx, "retry", sdk.MainLogsOptions{Since: time.Now().Add(-time.Hour)}, write); err != nil || since.String() != logs.String() {
		t.Errorf("since an hour ago = %q, %v", since.String(), err)
	}

	// An OOM kill of the main process is recorded as such.
	d.create(sdk.CreateSandboxRequest{Name: "hog", MemoryMiB: 64, Entrypoint: []string{"awk", `BEGIN { s = "xxxxxxxxxxxxxxxx"; while (1) s = s s }`}})
	if got := d.waitState("hog", sdk.StateStopped, 60*time.Second); got.Reason != "oom" {
		t.Errorf("memory hog stopped with %q (%s), want oom", got.Reason, d.lastMessage("hog"))
	}

	// A sandbox without an entrypoint has no main log; bad entrypoints are refused.
	d.create(sdk.CreateSandboxRequest{Name: "plain"})
	if err := d.client.MainLogs(ctx, "plain", false, io.Discard); !sdk.IsNotFound(err) {
		t.Errorf("logs of a sandbox without an entrypoint: %v", err)
	}
	for _, body := range []string{`{"restartPolicy": "sometimes", "entrypoint": ["true"]}`, `{"restartPolicy": "always"}`, `{"entrypoint": [""]}`} {
		if status, e := d.call("POST", "/v1/sandboxes", body); status != http.StatusBadRequest {
			t.Errorf("create %s: status %d (%+v), want 400", body, status, e)
		}
	}
}

func (d *daemon) lastMessage(ref string) string {
	evs, _ := d.client.ListEvents(context.Background(), ref, sdk.EventOptions{})
	if len(evs) == 0 {
		return ""
	}
	return evs[len(evs)-1].Message
}

func TestWebhooksAndEventStreams(t *testing.T) {
	const secret = "test-secret"
	var mu sync.Mutex
	var got []sdk.Event
	badSig := 0
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if !webhook.Verify(secret, r.Header.Get("X-Sbx-Timestamp"), body, r.Header.Get("X-Sbx-Signature")) {
			badSig++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var e sdk.Event
		json.Unmarshal(body, &e)
		got = append(got, e)
	}))
	defer rcv.Close()
	d := startDaemon(t, "--webhook", rcv.URL, "--webhook-secret", secret)
	ctx := context.Background()

	// Follow the global stream while a sandbox lives and dies.
	followCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	streamed := make(chan []string, 1)
	go func() {
		var trail []string
		d.client.FollowEvents(followCtx, "", sdk.EventOptions{}, func(e sdk.Event) error {
			trail = append(trail, string(e.State)+"/"+e.Reason)
			if e.State == sdk.StateDeleted {
				return io.EOF
			}
			return nil
		})
		streamed <- trail
	}()
	sb := d.create(sdk.CreateSandboxRequest{Name: "hooked"})
	if err := d.client.DeleteSandbox(ctx, "hooked", true); err != nil {
		t.Fatal(err)
	}
	want := []string{"started/create", "deleting/delete", "deleted/delete"}
	if trail := <-streamed; strings.Join(trail, " ") != strings.Join(want, " ") {
		t.Errorf("global stream: %v, want %v", trail, want)
	}
	waitFor(t, 20*time.Second, "three signed webhook deliveries", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) >= 3
	})
	mu.Lock()
	defer mu.Unlock()
	if badSig != 0 {
		t.Errorf("%d deliveries with a bad signature", badSig)
	}
	for i, e := range got[:3] {
		if e.SandboxID != sb.ID || e.SandboxName != "hooked" || string(e.State)+"/"+e.Reason != want[i] {
			t.Errorf("webhook %d = %+v, want %s", i, e, want[i])
		}
	}
}

func TestLifecycleCLI(t *testing.T) {
	d := startDaemon(t)
	run := func(args ...string) (string, string, int) {
		t.Helper()
		return d.sbx("", args...)
	}
	out, stderr, code := run("create", "cli", "--auto-stop", "1h", "--auto-archive", "2d", "--ttl", "3h", "-o", "json")
	if code != 0 {
		t.Fatalf("create: %d %s", code, stderr)
	}
	var sb sdk.Sandbox
	if err := json.Unmarshal([]byte(out), &sb); err != nil {
		t.Fatal(err)
	}
	d.created[sb.ID] = true
	if sb.AutoStopSeconds != 3600 || sb.AutoArchiveSeconds != 2*86400 || sb.TTLSeconds != 3*3600 || sb.ExpiresAt == nil || sb.ExpiresAction != "stop" {
		t.Errorf("created = %+v", sb)
	}
	if out, stderr, code = run("update", "cli", "--auto-stop", "0", "-o", "json"); code != 0 {
		t.Fatalf("update: %d %s", code, stderr)
	}
	json.Unmarshal([]byte(out), &sb)
	if sb.AutoStopSeconds != 0 || sb.ExpiresAction != "delete" {
		t.Errorf("after update: %+v", sb)
	}
	if out, _, code = run("get", "cli", "-o", "json"); code != 0 || !strings.Contains(out, `"expiresAt"`) {
		t.Errorf("get -o json: %d %s", code, out)
	}
	if out, _, code = run("get", "cli"); code != 0 || !strings.Contains(out, "delete at") {
		t.Errorf("get: %d %s", code, out)
	}
	if _, stderr, code = run("stop", "cli"); code != 0 {
		t.Fatal(stderr)
	}
	if out, _, code = run("events", "cli"); code != 0 || !strings.Contains(out, "started") || !strings.Contains(out, "stopped") || !strings.Contains(out, "user") {
		t.Errorf("events: %d %s", code, out)
	}
	if out, _, code = run("wait", "cli", "--state", "stopped", "--timeout", "5s", "-o", "json"); code != 0 || !strings.Contains(out, `"stopped"`) {
		t.Errorf("wait: %d %s", code, out)
	}
	if _, stderr, code = run("wait", "cli", "--state", "started", "--timeout", "1s"); code == 0 || !strings.Contains(stderr, "WAIT_TIMEOUT") {
		t.Errorf("wait that times out: %d %s", code, stderr)
	}
	if _, _, code = run("create", "x", "--auto-stop", "soon"); code == 0 {
		t.Error("a bad duration was accepted")
	}
}
