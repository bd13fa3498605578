package integration

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/sbxhq/sbx/sdk"
)

func TestSandboxLifecycle(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{Name: "life", Labels: map[string]string{"team": "a"}, Env: map[string]string{"GREETING": "hi"}, MemoryMiB: 256})
	if sb.State != sdk.StateStarted || !strings.HasPrefix(sb.ID, "sbx-") || sb.StartedAt == nil {
		t.Fatalf("created sandbox = %+v", sb)
	}
	if sb.Workdir != "/workspace" || sb.MemoryMiB != 256 || sb.CPU != 1 || sb.Image != "base" {
		t.Errorf("defaults not applied: %+v", sb)
	}

	// Exec sees env, workdir and hostname.
	res, err := d.client.Exec(ctx, "life", sdk.ExecRequest{Shell: "echo $GREETING; pwd; hostname; echo err >&2; exit 3"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "hi\n/workspace\nlife\n" || res.Stderr != "err\n" || res.ExitCode != 3 {
		t.Errorf("exec = %+v", res)
	}

	// Lookup by id and by name; list filters by label and state.
	for _, ref := range []string{sb.ID, "life"} {
		got, err := d.client.GetSandbox(ctx, ref)
		if err != nil || got.ID != sb.ID {
			t.Errorf("get %s = %+v, %v", ref, got, err)
		}
	}
	other := d.create(sdk.CreateSandboxRequest{Labels: map[string]string{"team": "b"}})
	list, err := d.client.ListSandboxes(ctx, sdk.ListOptions{Labels: map[string]string{"team": "a"}})
	if err != nil || len(list) != 1 || list[0].ID != sb.ID {
		t.Errorf("list team=a = %v, %v", list, err)
	}

	// Files written before a stop are there after the next start.
	if _, err := d.client.Upload(ctx, "life", "/workspace/keep.txt", strings.NewReader("persist me"), 0o600); err != nil {
		t.Fatal(err)
	}
	stopped, err := d.client.StopSandbox(ctx, "life", sdk.StopOptions{})
	if err != nil || stopped.State != sdk.StateStopped || stopped.Reason != "user" {
		t.Fatalf("stop = %+v, %v", stopped, err)
	}
	// A toolbox call on a stopped sandbox starts it first (lazy start).
	if res, err := d.client.Exec(ctx, "life", sdk.ExecRequest{Cmd: []string{"cat", "/workspace/keep.txt"}}); err != nil || res.Stdout != "persist me" {
		t.Errorf("exec on stopped sandbox (lazy start): %+v, %v", res, err)
	}
	if got, err := d.client.GetSandbox(ctx, "life"); err != nil || got.State != sdk.StateStarted || got.Reason != "lazy" {
		t.Errorf("after a lazy start: %+v, %v", got, err)
	}
	started, err := d.client.StartSandbox(ctx, "life")
	if err != nil || started.State != sdk.StateStarted {
		t.Fatalf("start = %+v, %v", started, err)
	}
	res, err = d.client.Exec(ctx, "life", sdk.ExecRequest{Cmd: []string{"cat", "/workspace/keep.txt"}})
	if err != nil || res.Stdout != "persist me" {
		t.Errorf("after restart: %+v, %v", res, err)
	}

	// The other sandbox cannot see this one's processes or files.
	if _, err := d.client.Exec(ctx, "life", sdk.ExecRequest{Shell: "sleep 777 >/dev/null 2>&1 &"}); err != nil {
		t.Fatal(err)
	}
	res, err = d.client.Exec(ctx, "life", sdk.ExecRequest{Shell: "ps -o args"})
	if err != nil || !strings.Contains(res.Stdout, "sleep 777") {
		t.Fatalf("own process not visible: %+v, %v", res, err)
	}
	res, err = d.client.Exec(ctx, other.ID, sdk.ExecRequest{Shell: "ls /workspace; ps -o args"})
	if err != nil || strings.Contains(res.Stdout, "keep.txt") || strings.Contains(res.Stdout, "sleep 777") {
		t.Errorf("isolation broken: %+v, %v", res, err)
	}

	if err := d.client.DeleteSandbox(ctx, "life", true); err != nil {
		t.Fatal(err)
	}
	if _, err := d.client.GetSandbox(ctx, "life"); !sdk.IsNotFound(err) {
		t.Errorf("get after delete: want not found, got %v", err)
	}
	if err := d.client.DeleteSandbox(ctx, other.ID, true); err != nil {
		t.Fatal(err)
	}
	d.assertNoLeaks()
}

func TestStopGraceThenKill(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{})
	// One process exits on SIGTERM and records it; one ignores SIGTERM.
	_, err := d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: `
		(trap 'echo got-term > /workspace/term; exit 0' TERM; while true; do sleep 0.1; done) >/dev/null 2>&1 &
		(trap '' TERM; while true; do sleep 0.1; done) >/dev/null 2>&1 &
		echo started`})
	if err != nil {
		t.Fatal(err)
	}
	grace := 1
	stopped, err := d.client.StopSandbox(ctx, sb.ID, sdk.StopOptions{GraceSeconds: &grace})
	if err != nil || stopped.State != sdk.StateStopped {
		t.Fatalf("stop = %+v, %v", stopped, err)
	}
	if _, err := d.client.StartSandbox(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	res, err := d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Cmd: []string{"cat", "/workspace/term"}})
	if err != nil || res.Stdout != "got-term\n" {
		t.Errorf("SIGTERM was not delivered before the kill: %+v, %v", res, err)
	}
}

func TestExecTimeoutAndSignals(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{})
	res, err := d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: "sleep 1000 & echo $! > /tmp/child; wait", TimeoutSeconds: 0.5})
	if err != nil || !res.TimedOut {
		t.Fatalf("timeout exec = %+v, %v", res, err)
	}
	// The grandchild died with the group.
	res, err = d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: "kill -0 $(cat /tmp/child) 2>/dev/null && echo alive || echo dead"})
	if err != nil || res.Stdout != "dead\n" {
		t.Errorf("grandchild after timeout: %+v, %v", res, err)
	}
	res, err = d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: "kill -9 $$"})
	if err != nil || res.Signal != "SIGKILL" || res.ExitCode != 137 {
		t.Errorf("signal exit = %+v, %v", res, err)
	}
	res, err = d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Cmd: []string{"cat"}, Stdin: "from stdin"})
	if err != nil || res.Stdout != "from stdin" {
		t.Errorf("stdin = %+v, %v", res, err)
	}
	var out, errb bytes.Buffer
	res, err = d.client.ExecStream(ctx, sb.ID, sdk.ExecRequest{Shell: "echo one; echo two >&2; exit 5"}, &out, &errb)
	if err != nil || res.ExitCode != 5 || out.String() != "one\n" || errb.String() != "two\n" {
		t.Errorf("stream = %+v, %q, %q, %v", res, out.String(), errb.String(), err)
	}
}

func TestPutIsGetOrCreate(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	const n = 5
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		ids     = map[string]bool{}
		created int
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sb, isNew, err := d.client.EnsureSandbox(ctx, "shared", sdk.CreateSandboxRequest{})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			ids[sb.ID] = true
			if isNew {
				created++
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(ids) != 1 || created != 1 {
		t.Fatalf("%d concurrent PUTs gave ids %v, %d created", n, ids, created)
	}
	for id := range ids {
		d.created[id] = true
	}
	list, _ := d.client.ListSandboxes(ctx, sdk.ListOptions{})
	if len(list) != 1 {
		t.Errorf("want 1 sandbox, have %d", len(list))
	}
}
