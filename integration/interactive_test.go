package integration

import (
	"bytes"
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
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// Background processes, sessions, terminals and watches through the daemon:
// real sandboxes, the real agent inside, the API proxy in between.

func TestInteractiveProcesses(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{Name: "procs"}).ID
	c := d.client

	// Exit codes and output, stdout and stderr apart.
	p, err := c.StartProcess(ctx, sb, sdk.StartProcessRequest{ID: "job", Shell: "echo out; echo err >&2; exit 3"})
	if err != nil {
		t.Fatal(err)
	}
	if p, err = c.WaitProcess(ctx, sb, "job", 30*time.Second); err != nil || p.ExitCode == nil || *p.ExitCode != 3 || p.Signal != "" {
		t.Fatalf("wait: %+v %v", p, err)
	}
	var stdout, stderr bytes.Buffer
	res, err := c.ProcessLogs(ctx, sb, "job", sdk.LogsOptions{}, &stdout, &stderr)
	if err != nil || !res.Exited || res.ExitCode != 3 || stdout.String() != "out\n" || stderr.String() != "err\n" || res.Gap {
		t.Fatalf("logs: %+v %v %q %q", res, err, stdout.String(), stderr.String())
	}

	// A signal is reported as the signal, and reaches the children.
	if _, err := c.StartProcess(ctx, sb, sdk.StartProcessRequest{ID: "sleeper", Shell: "sleep 300 & echo $!; wait"}); err != nil {
		t.Fatal(err)
	}
	m, err := c.WaitForLog(ctx, sb, "sleeper", sdk.WaitForLogRequest{Regex: `^\d+$`, TimeoutSeconds: 30})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SignalProcess(ctx, sb, "sleeper", "TERM"); err != nil {
		t.Fatal(err)
	}
	if p, err = c.WaitProcess(ctx, sb, "sleeper", 30*time.Second); err != nil || *p.ExitCode != 143 || p.Signal != "SIGTERM" {
		t.Fatalf("after TERM: %+v %v", p, err)
	}
	waitFor(t, 10*time.Second, "the child to get the signal too", func() bool {
		r, err := c.Exec(ctx, sb, sdk.ExecRequest{Cmd: []string{"kill", "-0", m.Line}})
		return err == nil && r.ExitCode != 0
	})

	// A timed-out exec kills its grandchildren, not just the child.
	r, err := c.Exec(ctx, sb, sdk.ExecRequest{Shell: "sh -c 'sleep 300 & echo $! > /tmp/gc; wait' & sleep 300", TimeoutSeconds: 1})
	if err != nil || !r.TimedOut || r.Signal != "SIGKILL" || r.ExitCode != 137 {
		t.Fatalf("timed-out exec: %+v %v", r, err)
	}
	waitFor(t, 10*time.Second, "the grandchild to be killed", func() bool {
		r, err := c.Exec(ctx, sb, sdk.ExecRequest{Shell: `test -s /tmp/gc && ! kill -0 "$(cat /tmp/gc)"`})
		return err == nil && r.ExitCode == 0
	})

	// Wait for a port: a real HTTP server inside the sandbox.
	if _, err := c.Exec(ctx, sb, sdk.ExecRequest{Shell: "mkdir -p /tmp/www && echo hi > /tmp/www/index.html"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartProcess(ctx, sb, sdk.StartProcessRequest{ID: "web", Cmd: []string{"httpd", "-f", "-p", "8080", "-h", "/tmp/www"}}); err != nil {
		t.Fatal(err)
	}
	ready, err := c.WaitForPort(ctx, sb, "web", sdk.WaitForPortRequest{Port: 8080, Protocol: "http", Path: "/index.html", Status: 200, TimeoutSeconds: 30})
	if err != nil || ready.Status != 200 {
		t.Fatalf("wait-for-port http: %+v %v", ready, err)
	}
	if _, err := c.WaitForPort(ctx, sb, "web", sdk.WaitForPortRequest{Port: 8080, TimeoutSeconds: 30}); err != nil {
		t.Fatalf("wait-for-port tcp: %v", err)
	}
	begin := time.Now()
	_, err = c.WaitForPort(ctx, sb, "web", sdk.WaitForPortRequest{Port: 8081, TimeoutSeconds: 0.5})
	if !sdk.IsWaitTimeout(err) || time.Since(begin) > 10*time.Second {
		t.Fatalf("nothing listens on 8081: %v after %s", err, time.Since(begin))
	}
	if _, err := c.StartProcess(ctx, sb, sdk.StartProcessRequest{ID: "crash", Shell: "sleep 0.2; exit 1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitForPort(ctx, sb, "crash", sdk.WaitForPortRequest{Port: 8082, TimeoutSeconds: 30}); !sdk.IsProcessExited(err) {
		t.Fatalf("process that exits first: %v", err)
	}

	// A process outlives a client that gave up following it.
	fctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = c.ProcessLogs(fctx, sb, "web", sdk.LogsOptions{Follow: true}, nil, nil)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("follow with a deadline: %v", err)
	}
	if p, err := c.GetProcess(ctx, sb, "web"); err != nil || p.State != sdk.ProcessRunning {
		t.Fatalf("after the follower left: %+v %v", p, err)
	}

	// The CLI: exec -d, ps, logs, kill, exec -t.
	out, stderrText, code := d.sbx("", "exec", "-d", "--id", "cli-job", sb, "--", "sh", "-c", "echo from-cli; sleep 300")
	if code != 0 || strings.TrimSpace(out) != "cli-job" {
		t.Fatalf("exec -d: %d %q %s", code, out, stderrText)
	}
	if _, err := c.WaitForLog(ctx, sb, "cli-job", sdk.WaitForLogRequest{Substring: "from-cli", TimeoutSeconds: 30}); err != nil {
		t.Fatal(err)
	}
	out, _, code = d.sbx("", "ps", sb)
	if code != 0 || !strings.Contains(out, "cli-job") || !strings.Contains(out, "web") || !strings.Contains(out, "143 (SIGTERM)") {
		t.Fatalf("ps: %d\n%s", code, out)
	}
	if out, stderrText, code = d.sbx("", "kill", sb, "cli-job", "-s", "KILL"); code != 0 {
		t.Fatalf("kill: %d %s %s", code, out, stderrText)
	}
	out, _, code = d.sbx("", "logs", sb, "cli-job", "-f")
	if code != 0 || out != "from-cli\n" {
		t.Fatalf("logs -f after kill: %d %q", code, out)
	}
	out, _, code = d.sbx("", "exec", "-t", sb, "--", "sh", "-c", "tty; exit 5")
	if code != 5 || !strings.Contains(out, "/dev/pts/") {
		t.Fatalf("exec -t: %d %q", code, out)
	}
	if list, err := c.ListPTYs(ctx, sb); err != nil || len(list) != 0 {
		t.Fatalf("exec -t left terminals: %+v %v", list, err)
	}
}

// syncBuffer is a bytes.Buffer that a stream writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestInteractiveStreamsEndWhenInstanceDies(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{Name: "doomed"})
	c := d.client
	if _, err := c.StartProcess(ctx, sb.ID, sdk.StartProcessRequest{ID: "bg", Shell: "echo up; sleep 300"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitForLog(ctx, sb.ID, "bg", sdk.WaitForLogRequest{Substring: "up", TimeoutSeconds: 30}); err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(ctx, sb.ID, sdk.WatchOptions{Path: "/tmp"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	errs := make(chan error, 3)
	var execOut syncBuffer
	go func() {
		_, err := c.ExecStream(ctx, sb.ID, sdk.ExecRequest{Shell: "echo started; sleep 300"}, &execOut, nil)
		errs <- fmt.Errorf("exec: %w", err)
	}()
	go func() {
		_, err := c.ProcessLogs(ctx, sb.ID, "bg", sdk.LogsOptions{Follow: true}, nil, nil)
		errs <- fmt.Errorf("logs: %w", err)
	}()
	go func() {
		ev, err := w.Next()
		errs <- fmt.Errorf("watch: %+v %w", ev, err)
	}()
	waitFor(t, 30*time.Second, "the exec to start", func() bool { return execOut.String() == "started\n" })

	kill := exec.Command("runc", "--root", filepath.Join(d.dataDir, "runc"), "kill", "--all", sb.ID, "KILL")
	if out, err := kill.CombinedOutput(); err != nil {
		t.Fatalf("runc kill: %v %s", err, out)
	}
	for range 3 {
		select {
		case err := <-errs:
			var apiErr *sdk.APIError
			if !errors.As(err, &apiErr) || apiErr.Code != "INSTANCE_LOST" {
				t.Errorf("%v, want an INSTANCE_LOST error event", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a stream hung after its instance died")
		}
	}
	waitFor(t, 30*time.Second, "the sandbox to be seen stopped", func() bool {
		got, err := c.GetSandbox(ctx, sb.ID)
		return err == nil && got.State == sdk.StateStopped
	})
}

func TestInteractiveSessions(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{Name: "sess"}).ID
	c := d.client
	ss, err := c.CreateSession(ctx, sb, sdk.CreateSessionRequest{ID: "dev", Env: map[string]string{"STAGE": "test"}, TimeoutSeconds: 30})
	if err != nil || ss.ID != "dev" || ss.Shell != "/bin/sh" {
		t.Fatalf("create: %+v %v", ss, err)
	}
	run := func(cmd string) *sdk.SessionExecResult {
		t.Helper()
		res, err := c.SessionExec(ctx, sb, "dev", sdk.SessionExecRequest{Command: cmd})
		if err != nil {
			t.Fatalf("%q: %v", cmd, err)
		}
		return res
	}
	run("mkdir -p /tmp/proj && cd /tmp/proj")
	run("export NAME=sbx; alias ll='ls -l'")
	if res := run(`pwd; echo "$NAME $STAGE"`); res.Stdout != "/tmp/proj\n"+"sbx test\n" || res.ExitCode != 0 {
		t.Fatalf("state did not persist: %+v", res)
	}
	if res := run("false"); res.ExitCode != 1 {
		t.Fatalf("false: %+v", res)
	}
	// A timeout stops the whole command line, not just the sleep.
	res, err := c.SessionExec(ctx, sb, "dev", sdk.SessionExecRequest{Command: "sleep 300; echo survivor", TimeoutSeconds: 0.5})
	if err != nil || !res.TimedOut || res.SessionEnded || res.ExitCode != 137 || res.Stdout != "" {
		t.Fatalf("timeout: %+v %v", res, err)
	}
	if res := run("pwd"); res.Stdout != "/tmp/proj\n" {
		t.Fatalf("after a timeout: %+v", res)
	}
	var out bytes.Buffer
	sres, err := c.SessionExecStream(ctx, sb, "dev", sdk.SessionExecRequest{Command: "echo streamed; exit 9"}, &out, nil)
	if err != nil || out.String() != "streamed\n" || !sres.SessionEnded || sres.ExitCode != 9 {
		t.Fatalf("stream: %+v %v %q", sres, err, out.String())
	}
	// The next command gets a fresh shell with the session's own env.
	if res := run(`echo "$NAME|$STAGE"`); res.Stdout != "|test\n" || !res.ShellRestarted || res.ExitCode != 0 {
		t.Fatalf("exec in an ended session: %+v", res)
	}
	if err := c.DeleteSession(ctx, sb, "dev"); err != nil {
		t.Fatal(err)
	}
	if list, err := c.ListSessions(ctx, sb); err != nil || len(list) != 0 {
		t.Fatalf("list: %+v %v", list, err)
	}
}

// readUntil reads from r until the output holds want.
func readUntil(t *testing.T, r io.Reader, seen *strings.Builder, want string) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		buf := make([]byte, 4096)
		for !strings.Contains(seen.String(), want) {
			n, err := r.Read(buf)
			seen.Write(buf[:n])
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil && !strings.Contains(seen.String(), want) {
			t.Fatalf("waiting for %q: %v; output %q", want, err, seen.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %q; output %q", want, seen.String())
	}
}

func TestInteractivePTY(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{Name: "pty"}).ID
	c := d.client
	p, err := c.CreatePTY(ctx, sb, sdk.CreatePTYRequest{Cols: 90, Rows: 20})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := c.AttachPTY(ctx, sb, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	var seen strings.Builder
	conn.Write([]byte(`read -p "name? " n; echo "hello $n"` + "\n"))
	readUntil(t, conn, &seen, "name? ")
	conn.Write([]byte("bob\n"))
	readUntil(t, conn, &seen, "hello bob")
	conn.Write([]byte("stty size\n"))
	readUntil(t, conn, &seen, "20 90")
	conn.Close() // detach: the shell keeps running

	if got, err := c.GetPTY(ctx, sb, p.ID); err != nil || got.State != sdk.ProcessRunning {
		t.Fatalf("after detach: %+v %v", got, err)
	}
	conn, err = c.AttachPTY(ctx, sb, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	var replay strings.Builder
	readUntil(t, conn, &replay, "hello bob") // recent output is replayed
	conn.Write([]byte("exit 4\n"))
	io.Copy(io.Discard, conn)
	if code, _, ok := conn.Exit(); !ok || code != 4 {
		t.Fatalf("exit: %d %v", code, ok)
	}
	if err := c.DeletePTY(ctx, sb, p.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AttachPTY(ctx, sb, p.ID); !sdk.IsNotFound(err) {
		t.Fatalf("attach to a deleted terminal: %v", err)
	}
}

// tmux drives a private tmux server for one test.
type tmux struct {
	t      *testing.T
	socket string
}

func (x *tmux) run(args ...string) string {
	x.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", x.socket}, args...)...).CombinedOutput()
	if err != nil {
		x.t.Fatalf("tmux %v: %v %s", args, err, out)
	}
	return string(out)
}

func (x *tmux) waitScreen(want string) {
	x.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		screen := x.run("capture-pane", "-p", "-t", "t")
		if strings.Contains(screen, want) {
			return
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("screen never showed %q:\n%s", want, screen)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestInteractiveTermInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is needed (scripts/setup-tests.sh installs it)")
	}
	d := startDaemon(t)
	sb := d.create(sdk.CreateSandboxRequest{Name: "term"}).ID
	x := &tmux{t: t, socket: "sbx-test-" + strconv.Itoa(os.Getpid())}
	t.Cleanup(func() { exec.Command("tmux", "-L", x.socket, "kill-server").Run() })
	result := filepath.Join(t.TempDir(), "code")
	script := fmt.Sprintf("SBX_HOST=http://%s SBX_TOKEN=%s %s term %s; echo $? > %s; sleep 600",
		d.addr, d.token, sbxBin, sb, result)
	x.run("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "100", "-y", "30", script)
	x.run("set-option", "-t", "t", "status", "off")
	x.run("send-keys", "-t", "t", "echo hi-$((40+2))", "Enter")
	x.waitScreen("hi-42")
	// Ctrl-C reaches the sandbox's shell, which interrupts its command,
	// instead of killing sbx: the local terminal is in raw mode.
	x.run("send-keys", "-t", "t", "echo zz$((1+1)); sleep 300", "Enter")
	x.waitScreen("zz2")
	x.run("send-keys", "-t", "t", "C-c")
	x.run("send-keys", "-t", "t", "echo after-$((6*7))", "Enter")
	x.waitScreen("after-42")
	x.run("send-keys", "-t", "t", `read -p "name? " n; echo "got $n"`, "Enter")
	x.waitScreen("name? ")
	x.run("send-keys", "-t", "t", "tmux-user", "Enter")
	x.waitScreen("got tmux-user")
	// A window resize reaches the sandbox's terminal.
	x.run("resize-window", "-t", "t", "-x", "120", "-y", "40")
	waitFor(t, 30*time.Second, "the resize to arrive", func() bool {
		x.run("send-keys", "-t", "t", "clear; stty size", "Enter")
		time.Sleep(100 * time.Millisecond)
		return strings.Contains(x.run("capture-pane", "-p", "-t", "t"), "40 120")
	})
	x.run("send-keys", "-t", "t", "exit 6", "Enter")
	waitFor(t, 30*time.Second, "sbx term to exit", func() bool {
		b, _ := os.ReadFile(result)
		return len(b) > 0
	})
	if b, _ := os.ReadFile(result); strings.TrimSpace(string(b)) != "6" {
		t.Fatalf("sbx term exited with %q, want the shell's 6", b)
	}
}

func TestInteractiveWatch(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{Name: "watch"}).ID
	c := d.client
	if _, err := c.Exec(ctx, sb, sdk.ExecRequest{Shell: "mkdir -p /workspace/w"}); err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(ctx, sb, sdk.WatchOptions{Path: "/workspace/w", Recursive: true, Exclude: []string{"*.swp"}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := c.Exec(ctx, sb, sdk.ExecRequest{Shell: "cd /workspace/w && echo a > f && echo b >> f && touch x.swp && mv f g && rm g && mkdir d && echo c > d/h"}); err != nil {
		t.Fatal(err)
	}
	want := []string{"create f", "write f", "rename g from f", "remove g", "create d/", "create d/h"}
	for _, wnt := range want {
		ev, err := w.Next()
		if err != nil {
			t.Fatalf("want %q: %v", wnt, err)
		}
		got := ev.Type + " " + strings.TrimPrefix(ev.Path, "/workspace/w/")
		if ev.IsDir {
			got += "/"
		}
		if ev.OldPath != "" {
			got += " from " + strings.TrimPrefix(ev.OldPath, "/workspace/w/")
		}
		if got != wnt {
			t.Fatalf("got %q, want %q", got, wnt)
		}
	}
	// The CLI prints the same.
	cctx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(cctx, sbxBin, "watch", sb, "/workspace/w")
	cmd.Env = append(os.Environ(), "SBX_HOST=http://"+d.addr, "SBX_TOKEN="+d.token)
	var out syncBuffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cmd.Wait() }()
	i := 0
	waitFor(t, 30*time.Second, "sbx watch to report", func() bool {
		i++ // a new file each time: the watch may not be in place for the first
		c.Exec(ctx, sb, sdk.ExecRequest{Shell: fmt.Sprintf("touch /workspace/w/cli-%d", i)})
		return strings.Contains(out.String(), "create /workspace/w/cli-")
	})
}
