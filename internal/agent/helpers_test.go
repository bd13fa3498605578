package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/wire"
)

// Tests run the agent in the test process (not PID 1, so as a child
// subreaper). Its reaper takes every child's exit status, so nothing here may
// use os/exec: start processes with startChild.

const (
	helperSocketEnv = "SBX_AGENT_TEST_SOCKET"
	helperCwdEnv    = "SBX_AGENT_TEST_CWD"
)

// TestMain doubles as an agent binary: with helperSocketEnv set the test
// binary runs Run and exits, like `sbx agent`.
func TestMain(m *testing.M) {
	if sock := os.Getenv(helperSocketEnv); sock != "" {
		if err := Run(context.Background(), Config{Socket: sock, DefaultCwd: os.Getenv(helperCwdEnv)}); err != nil {
			fmt.Fprintln(os.Stderr, "agent:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// waitFor is how long a test polls for a condition before failing.
const waitFor = 20 * time.Second

type testAgent struct {
	t      *testing.T
	runDir string
	cwd    string
	client *agentapi.Client
	http   *http.Client
	cancel context.CancelFunc
	done   chan error

	stopOnce sync.Once
	runErr   error
}

func newRunDir(t *testing.T) string {
	// Not t.TempDir: unix socket paths must stay short.
	dir, err := os.MkdirTemp("", "sbx-agent-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// startAgent runs an agent in-process and waits until it answers.
func startAgent(t *testing.T) *testAgent {
	t.Helper()
	a := &testAgent{t: t, runDir: newRunDir(t), cwd: t.TempDir(), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	go func() {
		a.done <- Run(ctx, Config{Socket: filepath.Join(a.runDir, agentapi.AgentSock), DefaultCwd: a.cwd})
	}()
	a.client = agentapi.NewClient(a.runDir)
	a.http = &http.Client{Transport: a.client.Transport()}
	t.Cleanup(func() {
		if err := a.stop(); err != nil {
			t.Errorf("Run: %v", err)
		}
		a.client.Close()
	})
	wctx, wcancel := context.WithTimeout(ctx, waitFor)
	defer wcancel()
	if err := a.client.WaitReady(wctx); err != nil {
		t.Fatalf("agent not ready: %v", err)
	}
	return a
}

// stop cancels Run (which kills the processes it started) and returns its result.
func (a *testAgent) stop() error {
	a.stopOnce.Do(func() {
		a.cancel()
		a.runErr = <-a.done
	})
	return a.runErr
}

// do sends one request to the agent; body may be nil, a []byte, or any
// value to encode as JSON.
func (a *testAgent) do(method, path string, body any) *http.Response {
	a.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	case io.Reader:
		r = b
	default:
		j, err := json.Marshal(b)
		if err != nil {
			a.t.Fatal(err)
		}
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, "http://agent"+path, r)
	if err != nil {
		a.t.Fatal(err)
	}
	resp, err := a.http.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

// call sends a request, checks the status and decodes a JSON answer into out
// (if not nil).
func (a *testAgent) call(method, path string, body any, want int, out any) {
	a.t.Helper()
	resp := a.do(method, path, body)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		a.t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			a.t.Fatalf("%s %s: decode %q: %v", method, path, data, err)
		}
	}
}

// callErr expects an error answer with the given status and code.
func (a *testAgent) callErr(method, path string, body any, status int, code wire.Code) {
	a.t.Helper()
	var er wire.ErrorResponse
	a.call(method, path, body, status, &er)
	if er.Error.Code != code || er.Error.Message == "" {
		a.t.Fatalf("%s %s: error %+v, want code %s with a message", method, path, er.Error, code)
	}
}

func (a *testAgent) exec(req wire.ExecRequest) wire.ExecResult {
	a.t.Helper()
	var res wire.ExecResult
	a.call("POST", "/exec", req, http.StatusOK, &res)
	return res
}

// eventReader reads a streamed exec.
type eventReader struct {
	t    *testing.T
	resp *http.Response
	sc   *bufio.Scanner
}

func (a *testAgent) stream(ctx context.Context, req wire.ExecRequest) *eventReader {
	a.t.Helper()
	body, _ := json.Marshal(req)
	hreq, _ := http.NewRequestWithContext(ctx, "POST", "http://agent/exec?stream=true", bytes.NewReader(body))
	resp, err := a.http.Do(hreq)
	if err != nil {
		a.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		a.t.Fatalf("stream: status %d: %s", resp.StatusCode, data)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		a.t.Fatalf("stream content type %q", ct)
	}
	a.t.Cleanup(func() { resp.Body.Close() })
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	return &eventReader{t: a.t, resp: resp, sc: sc}
}

// next returns the next event, or ok=false at the end of the stream.
func (e *eventReader) next() (ev wire.ExecEvent, ok bool) {
	e.t.Helper()
	if !e.sc.Scan() {
		return ev, false
	}
	if err := json.Unmarshal(e.sc.Bytes(), &ev); err != nil {
		e.t.Fatalf("bad event %q: %v", e.sc.Bytes(), err)
	}
	return ev, true
}

// must returns the next event of type typ, skipping heartbeats.
func (e *eventReader) must(typ string) wire.ExecEvent {
	e.t.Helper()
	for {
		ev, ok := e.next()
		if !ok {
			e.t.Fatalf("stream ended, want %q event", typ)
		}
		if ev.Type == "heartbeat" && typ != "heartbeat" {
			continue
		}
		if ev.Type != typ {
			e.t.Fatalf("got %+v, want a %q event", ev, typ)
		}
		return ev
	}
}

// untilExit reads to the end of the stream and returns the exit event,
// failing unless it is the last event and the only one.
func (e *eventReader) untilExit() (exit wire.ExecEvent, stdout, stderr string) {
	e.t.Helper()
	var out, errb strings.Builder
	exits := 0
	for {
		ev, ok := e.next()
		if !ok {
			break
		}
		if exits > 0 {
			e.t.Fatalf("event %+v after exit", ev)
		}
		switch ev.Type {
		case "stdout":
			out.Write(ev.Data)
		case "stderr":
			errb.Write(ev.Data)
		case "exit":
			exit = ev
			exits++
		}
	}
	if exits != 1 {
		e.t.Fatalf("%d exit events, want 1", exits)
	}
	return exit, out.String(), errb.String()
}

// alive reports whether pid exists (a zombie counts: it is not reaped).
func alive(pid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return err == nil
}

// waitGone fails the test unless pid disappears (killed and reaped).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	poll(t, fmt.Sprintf("process %d to be gone", pid), func() bool { return !alive(pid) })
}

func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// spawn starts a process through the package's reaper.
func spawn(t *testing.T, argv []string, env []string, sys *syscall.SysProcAttr) *child {
	t.Helper()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	c, err := startChild(argv[0], argv, &syscall.ProcAttr{
		Env:   env,
		Files: []uintptr{devnull.Fd(), os.Stderr.Fd(), os.Stderr.Fd()},
		Sys:   sys,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// startHelperAgent runs the test binary as an agent process (see TestMain)
// and waits until it answers. It is killed at the end of the test unless it
// exited; wait for it with <-proc.done.
func startHelperAgent(t *testing.T, sys *syscall.SysProcAttr) (*testAgent, *child) {
	t.Helper()
	runDir := newRunDir(t)
	env := append(os.Environ(),
		helperSocketEnv+"="+filepath.Join(runDir, agentapi.AgentSock),
		helperCwdEnv+"="+t.TempDir())
	proc := spawn(t, []string{os.Args[0], "-test.run=^$"}, env, sys)
	a := &testAgent{t: t, runDir: runDir, client: agentapi.NewClient(runDir)}
	a.http = &http.Client{Transport: a.client.Transport()}
	t.Cleanup(func() {
		a.client.Close()
		if syscall.Kill(proc.pid, syscall.SIGKILL) == nil {
			<-proc.done
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := a.client.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return a, proc
}
