package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sbxhq/sbx/wire"
)

func TestExecArgvAndShell(t *testing.T) {
	t.Parallel()
	a := startAgent(t)

	res := a.exec(wire.ExecRequest{Cmd: []string{"echo", "hello", "world"}})
	if res.ExitCode != 0 || res.Stdout != "hello world\n" || res.Stderr != "" || res.Signal != "" || res.TimedOut {
		t.Fatalf("argv: %+v", res)
	}
	res = a.exec(wire.ExecRequest{Shell: "echo out; echo err >&2; exit 3"})
	if res.ExitCode != 3 || res.Stdout != "out\n" || res.Stderr != "err\n" || res.Truncated {
		t.Fatalf("shell: %+v", res)
	}
	// A shell reports a missing command itself.
	res = a.exec(wire.ExecRequest{Shell: "no-such-command-sbx"})
	if res.ExitCode != 127 {
		t.Fatalf("shell missing command: %+v", res)
	}
}

func TestExecSignalDeath(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	res := a.exec(wire.ExecRequest{Shell: "kill -9 $$"})
	if res.ExitCode != 128+9 || res.Signal != "SIGKILL" || res.TimedOut {
		t.Fatalf("got %+v", res)
	}
}

func TestExecEnvCwdStdin(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	if err := os.Mkdir(filepath.Join(a.cwd, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	res := a.exec(wire.ExecRequest{
		Shell: `echo "$SBX_TEST_A $SBX_TEST_B"; pwd -P`,
		Cwd:   "sub",
		Env:   map[string]string{"SBX_TEST_A": "one", "SBX_TEST_B": "two words"},
	})
	if want := "one two words\n" + filepath.Join(a.cwd, "sub") + "\n"; res.Stdout != want {
		t.Fatalf("stdout %q, want %q", res.Stdout, want)
	}
	// The agent's own environment is inherited and can be overridden.
	res = a.exec(wire.ExecRequest{Shell: `echo "$HOME"`, Env: map[string]string{"HOME": "/elsewhere"}})
	if res.Stdout != "/elsewhere\n" {
		t.Fatalf("override HOME: %q", res.Stdout)
	}
	res = a.exec(wire.ExecRequest{Cmd: []string{"pwd", "-P"}})
	if res.Stdout != a.cwd+"\n" {
		t.Fatalf("default cwd %q, want %q", res.Stdout, a.cwd)
	}
	res = a.exec(wire.ExecRequest{Cmd: []string{"cat"}, Stdin: "line1\nline2"})
	if res.Stdout != "line1\nline2" {
		t.Fatalf("stdin: %q", res.Stdout)
	}
	res = a.exec(wire.ExecRequest{Cmd: []string{"cat"}}) // stdin is /dev/null: no hang
	if res.Stdout != "" || res.ExitCode != 0 {
		t.Fatalf("no stdin: %+v", res)
	}
	// More stdin than the command reads must not hang the exec.
	res = a.exec(wire.ExecRequest{Cmd: []string{"true"}, Stdin: strings.Repeat("x", 512<<10)})
	if res.ExitCode != 0 {
		t.Fatalf("unread stdin: %+v", res)
	}
}

func TestExecErrors(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	script := filepath.Join(a.cwd, "noexec.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		body any
		code string
	}{
		{wire.ExecRequest{}, "INVALID_EXEC"},
		{wire.ExecRequest{Cmd: []string{"true"}, Shell: "true"}, "INVALID_EXEC"},
		{wire.ExecRequest{Cmd: []string{""}}, "INVALID_EXEC"},
		{wire.ExecRequest{Cmd: []string{"echo", "a\x00b"}}, "INVALID_EXEC"},
		{wire.ExecRequest{Cmd: []string{"true"}, TimeoutSeconds: -1}, "INVALID_EXEC"},
		{wire.ExecRequest{Cmd: []string{"no-such-command-sbx"}}, "COMMAND_NOT_FOUND"},
		{wire.ExecRequest{Cmd: []string{"./noexec.sh"}}, "COMMAND_NOT_FOUND"},
		{wire.ExecRequest{Cmd: []string{"true"}, Cwd: "missing"}, "CWD_NOT_FOUND"},
		{wire.ExecRequest{Cmd: []string{"true"}, Cwd: "noexec.sh"}, "CWD_NOT_FOUND"},
		{wire.ExecRequest{Cmd: []string{"true"}, Env: map[string]string{"A=B": "x"}}, "INVALID_ENV"},
		{map[string]any{"cmd": []string{"true"}, "bogus": 1}, "UNKNOWN_FIELD"},
		{[]byte(`{"cmd":["true"]} trailing`), "INVALID_JSON"},
	} {
		a.callErr("POST", "/exec", tc.body, http.StatusBadRequest, wire.Code(tc.code))
	}
	big := []byte(`{"shell":"` + strings.Repeat("x", 2<<20) + `"}`)
	a.callErr("POST", "/exec", big, http.StatusRequestEntityTooLarge, "BODY_TOO_LARGE")
	a.callErr("POST", "/exec?stream=maybe", wire.ExecRequest{Cmd: []string{"true"}}, http.StatusBadRequest, "INVALID_PARAMETER")
	a.callErr("GET", "/no/such/route", nil, http.StatusNotFound, "ROUTE_NOT_FOUND")
}

func TestExecTimeoutKillsGrandchild(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	res := a.exec(wire.ExecRequest{Shell: "sleep 1000 & echo $!; wait", TimeoutSeconds: 0.3})
	if !res.TimedOut || res.Signal != "SIGKILL" || res.ExitCode != 137 {
		t.Fatalf("got %+v", res)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(res.Stdout))
	if err != nil {
		t.Fatalf("stdout %q: %v", res.Stdout, err)
	}
	waitGone(t, pid)
}

func TestExecTruncation(t *testing.T) {
	// Not parallel: changes a package variable before its agent starts.
	old := outputLimit
	outputLimit = 1000
	t.Cleanup(func() { outputLimit = old })
	a := startAgent(t)

	res := a.exec(wire.ExecRequest{Shell: "head -c 5000 /dev/zero; echo small >&2"})
	if len(res.Stdout) != 1000 || res.Stderr != "small\n" || !res.Truncated || res.ExitCode != 0 {
		t.Fatalf("got stdout %d bytes, stderr %q, truncated %v, exit %d", len(res.Stdout), res.Stderr, res.Truncated, res.ExitCode)
	}
	res = a.exec(wire.ExecRequest{Shell: "head -c 1000 /dev/zero"})
	if len(res.Stdout) != 1000 || res.Truncated {
		t.Fatalf("at the limit: %d bytes, truncated %v", len(res.Stdout), res.Truncated)
	}
}

func TestExecStream(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	ev := a.stream(context.Background(), wire.ExecRequest{Shell: "echo out; echo err >&2; echo out2; exit 2"})
	start := ev.must("start")
	if start.Pid <= 0 {
		t.Fatalf("start %+v", start)
	}
	var out, errb bytes.Buffer
	var lastSeq int64
	for {
		e, ok := ev.next()
		if !ok {
			t.Fatal("stream ended without exit")
		}
		if e.Type == "exit" {
			if e.ExitCode != 2 || e.Signal != "" || e.TimedOut {
				t.Fatalf("exit %+v", e)
			}
			break
		}
		if e.Type != "stdout" && e.Type != "stderr" && e.Type != "heartbeat" {
			t.Fatalf("unexpected event %+v", e)
		}
		if e.Type == "heartbeat" {
			continue
		}
		if e.Seq != lastSeq+1 {
			t.Fatalf("seq %d after %d", e.Seq, lastSeq)
		}
		lastSeq = e.Seq
		if e.Type == "stdout" {
			out.Write(e.Data)
		} else {
			errb.Write(e.Data)
		}
	}
	if e, ok := ev.next(); ok {
		t.Fatalf("event after exit: %+v", e)
	}
	if out.String() != "out\nout2\n" || errb.String() != "err\n" {
		t.Fatalf("stdout %q stderr %q", out.String(), errb.String())
	}
	// Errors before the start are plain JSON errors.
	a.callErr("POST", "/exec?stream=true", wire.ExecRequest{Cmd: []string{"no-such-command-sbx"}}, http.StatusBadRequest, "COMMAND_NOT_FOUND")
}

func TestExecStreamHeartbeat(t *testing.T) {
	// Not parallel: changes a package variable before its agent starts.
	old := heartbeatInterval
	heartbeatInterval = 5 * time.Millisecond
	t.Cleanup(func() { heartbeatInterval = old })
	a := startAgent(t)

	fifo := filepath.Join(a.cwd, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ev := a.stream(context.Background(), wire.ExecRequest{Cmd: []string{"cat", "fifo"}})
	ev.must("start")
	ev.must("heartbeat") // cat is blocked on the fifo: silence
	if err := os.WriteFile(fifo, []byte("bye"), 0); err != nil {
		t.Fatal(err)
	}
	exit, stdout, _ := ev.untilExit()
	if exit.ExitCode != 0 || stdout != "bye" {
		t.Fatalf("exit %+v stdout %q", exit, stdout)
	}
}

func TestExecConcurrent(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	var wg sync.WaitGroup
	errs := make(chan string, 20)
	for i := range 20 {
		wg.Go(func() {
			body := fmt.Sprintf(`{"shell":"echo %d; echo e%d >&2; exit %d"}`, i, i, i)
			req, _ := http.NewRequest("POST", "http://agent/exec", strings.NewReader(body))
			resp, err := a.http.Do(req)
			if err != nil {
				errs <- err.Error()
				return
			}
			defer resp.Body.Close()
			var res wire.ExecResult
			if err := decodeJSONBody(resp, &res); err != nil {
				errs <- err.Error()
				return
			}
			if res.ExitCode != i || res.Stdout != fmt.Sprintf("%d\n", i) || res.Stderr != fmt.Sprintf("e%d\n", i) {
				errs <- fmt.Sprintf("exec %d: %+v", i, res)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestExecClientDisconnectKills(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	ctx, cancel := context.WithCancel(context.Background())
	ev := a.stream(ctx, wire.ExecRequest{Shell: "sleep 1000 & echo $!; wait"})
	shell := ev.must("start").Pid
	grandchild, err := strconv.Atoi(strings.TrimSpace(string(ev.must("stdout").Data)))
	if err != nil {
		t.Fatal(err)
	}
	if !alive(shell) || !alive(grandchild) {
		t.Fatal("processes not running before the disconnect")
	}
	cancel()
	waitGone(t, shell)
	waitGone(t, grandchild)
}

// A background process holding the output pipes must not hold the exec open
// forever; the agent still stops it when it shuts down.
func TestExecBackgroundProcess(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	res := a.exec(wire.ExecRequest{Shell: "sleep 1000 & echo $!"})
	pid, err := strconv.Atoi(strings.TrimSpace(res.Stdout))
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("got %+v", res)
	}
	if !alive(pid) {
		t.Fatal("background process died with its exec")
	}
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
}

func decodeJSONBody(resp *http.Response, v any) error {
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
