package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/wire"
)

func (a *testAgent) startProc(req wire.StartProcessRequest) wire.Process {
	a.t.Helper()
	var p wire.Process
	a.call("POST", "/processes", req, http.StatusCreated, &p)
	return p
}

func (a *testAgent) waitProc(id string) wire.Process {
	a.t.Helper()
	var p wire.Process
	a.call("POST", "/processes/"+id+"/wait?timeoutSeconds=20", nil, http.StatusOK, &p)
	return p
}

// logs reads a process's log stream to its end.
func (a *testAgent) logs(id, query string) (events []wire.ExecEvent) {
	a.t.Helper()
	resp := a.do("GET", "/processes/"+id+"/logs"+query, nil)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		a.t.Fatalf("logs: %d %s", resp.StatusCode, b)
	}
	dec := json.NewDecoder(resp.Body)
	for {
		var ev wire.ExecEvent
		if err := dec.Decode(&ev); err != nil {
			if err != io.EOF {
				a.t.Fatalf("logs: %v", err)
			}
			return events
		}
		if ev.Type != "heartbeat" {
			events = append(events, ev)
		}
	}
}

func TestProcessExitCodeAndLogs(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	p := a.startProc(wire.StartProcessRequest{ID: "job", Shell: "echo out1; echo err1 >&2; echo out2; exit 7"})
	if p.ID != "job" || p.Pid <= 0 || p.State != wire.ProcessRunning && p.State != wire.ProcessExited {
		t.Fatalf("started: %+v", p)
	}
	p = a.waitProc("job")
	if p.State != wire.ProcessExited || p.ExitCode == nil || *p.ExitCode != 7 || p.Signal != "" || p.EndedAt == nil || p.StdinOpen {
		t.Fatalf("after wait: %+v", p)
	}
	evs := a.logs("job", "")
	var stdout, stderr strings.Builder
	var last int64
	for _, ev := range evs[:len(evs)-1] {
		if ev.Seq != last+1 {
			t.Fatalf("sequence numbers not dense: %+v after %d", ev, last)
		}
		last = ev.Seq
		if ev.Type == "stdout" {
			stdout.Write(ev.Data)
		} else {
			stderr.Write(ev.Data)
		}
	}
	if stdout.String() != "out1\nout2\n" || stderr.String() != "err1\n" {
		t.Fatalf("stdout %q stderr %q", stdout.String(), stderr.String())
	}
	end := evs[len(evs)-1]
	if end.Type != "exit" || end.ExitCode != 7 || end.Seq != last {
		t.Fatalf("last event %+v", end)
	}
	// From an offset: only what came after it.
	evs = a.logs("job", "?offset="+strconv.FormatInt(last-1, 10))
	if len(evs) != 2 || evs[0].Seq != last || evs[1].Type != "exit" {
		t.Fatalf("from offset: %+v", evs)
	}
	a.callErr("GET", "/processes/nope", nil, http.StatusNotFound, "PROCESS_NOT_FOUND")
	a.callErr("GET", "/processes/job/logs?offset=x", nil, http.StatusBadRequest, "INVALID_OFFSET")
	a.callErr("POST", "/processes", wire.StartProcessRequest{ID: "bad id", Cmd: []string{"true"}}, http.StatusBadRequest, "INVALID_ID")
	a.callErr("POST", "/processes", wire.StartProcessRequest{}, http.StatusBadRequest, "INVALID_EXEC")
}

func TestProcessSignalReachesGroup(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	// The shell's child prints its pid, then both wait for the signal.
	a.startProc(wire.StartProcessRequest{ID: "tree", Shell: "sleep 300 & echo $!; wait"})
	var m wire.LogMatch
	a.call("POST", "/processes/tree/wait-for-log", wire.WaitForLogRequest{Regex: `^[0-9]+$`, TimeoutSeconds: 20}, http.StatusOK, &m)
	child, _ := strconv.Atoi(m.Line)
	if !alive(child) {
		t.Fatalf("child %d not running", child)
	}
	a.callErr("POST", "/processes/tree/signal", wire.SignalRequest{Signal: "NOPE"}, http.StatusBadRequest, "INVALID_SIGNAL")
	a.call("POST", "/processes/tree/signal", wire.SignalRequest{Signal: "term"}, http.StatusOK, nil)
	p := a.waitProc("tree")
	if *p.ExitCode != 128+15 || p.Signal != "SIGTERM" {
		t.Fatalf("after SIGTERM: %+v", p)
	}
	waitGone(t, child) // the group got it, not just the shell
	a.callErr("POST", "/processes/tree/signal", wire.SignalRequest{Signal: "9"}, http.StatusConflict, wire.CodeProcessExited)
}

func TestProcessTimeoutKillsGrandchildren(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	a.startProc(wire.StartProcessRequest{ID: "slow", Shell: "sh -c 'sleep 300 & echo $!; wait' ; sleep 300", TimeoutSeconds: 0.5})
	var m wire.LogMatch
	a.call("POST", "/processes/slow/wait-for-log", wire.WaitForLogRequest{Regex: `^[0-9]+$`, TimeoutSeconds: 20}, http.StatusOK, &m)
	grandchild, _ := strconv.Atoi(m.Line)
	p := a.waitProc("slow")
	if !p.TimedOut || p.Signal != "SIGKILL" {
		t.Fatalf("after timeout: %+v", p)
	}
	waitGone(t, grandchild)
}

func TestProcessStdin(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	a.startProc(wire.StartProcessRequest{ID: "cat", Cmd: []string{"cat"}})
	a.call("POST", "/processes/cat/stdin", []byte("hello "), http.StatusNoContent, nil)
	a.call("POST", "/processes/cat/stdin", []byte("world\n"), http.StatusNoContent, nil)
	var m wire.LogMatch
	a.call("POST", "/processes/cat/wait-for-log", wire.WaitForLogRequest{Substring: "hello world", TimeoutSeconds: 20}, http.StatusOK, &m)
	if m.Line != "hello world" || m.Stream != "stdout" {
		t.Fatalf("match %+v", m)
	}
	a.call("POST", "/processes/cat/stdin/close", nil, http.StatusNoContent, nil)
	if p := a.waitProc("cat"); *p.ExitCode != 0 {
		t.Fatalf("cat after EOF: %+v", p)
	}
	a.callErr("POST", "/processes/cat/stdin", []byte("late"), http.StatusConflict, wire.CodeProcessExited)
}

func TestProcessFollowAndSurvivesDisconnect(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	a.startProc(wire.StartProcessRequest{ID: "f", Cmd: []string{"cat"}})
	// A follower that goes away does not take the process with it.
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://agent/processes/f/logs?follow=true", nil)
	resp, err := a.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()

	resp = a.do("GET", "/processes/f/logs?follow=true", nil)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	next := func() wire.ExecEvent {
		t.Helper()
		for sc.Scan() {
			var ev wire.ExecEvent
			json.Unmarshal(sc.Bytes(), &ev)
			if ev.Type != "heartbeat" {
				return ev
			}
		}
		t.Fatalf("stream ended: %v", sc.Err())
		return wire.ExecEvent{}
	}
	a.call("POST", "/processes/f/stdin", []byte("one\n"), http.StatusNoContent, nil)
	if ev := next(); ev.Type != "stdout" || string(ev.Data) != "one\n" || ev.Seq != 1 {
		t.Fatalf("first: %+v", ev)
	}
	a.call("POST", "/processes/f/stdin", []byte("two\n"), http.StatusNoContent, nil)
	if ev := next(); string(ev.Data) != "two\n" || ev.Seq != 2 {
		t.Fatalf("second: %+v", ev)
	}
	a.call("POST", "/processes/f/stdin/close", nil, http.StatusNoContent, nil)
	if ev := next(); ev.Type != "exit" || ev.ExitCode != 0 || ev.Seq != 2 {
		t.Fatalf("end: %+v", ev)
	}
	var list []wire.Process
	a.call("GET", "/processes", nil, http.StatusOK, &list)
	if len(list) != 1 || list[0].ID != "f" {
		t.Fatalf("list %+v", list)
	}
	a.call("DELETE", "/processes/f", nil, http.StatusNoContent, nil)
	a.callErr("GET", "/processes/f", nil, http.StatusNotFound, "PROCESS_NOT_FOUND")
}

func TestProcessRingDropsOldest(t *testing.T) {
	old := processLogLimit
	processLogLimit = 1000
	t.Cleanup(func() { processLogLimit = old })
	a := startAgent(t)
	a.startProc(wire.StartProcessRequest{ID: "big", Cmd: []string{"seq", "1", "50000"}}) // 288 KB
	a.waitProc("big")
	evs := a.logs("big", "")
	var out strings.Builder
	for _, ev := range evs[:len(evs)-1] {
		out.Write(ev.Data)
	}
	if out.Len() > 1000+32<<10 || !strings.HasSuffix(out.String(), "\n50000\n") || strings.HasPrefix(out.String(), "1\n") {
		t.Fatalf("retained %d bytes: %.40q…", out.Len(), out.String())
	}
	if evs[0].Seq == 1 {
		t.Fatalf("nothing dropped?")
	}
}

func TestWaitForLogExitAndTimeout(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	a.startProc(wire.StartProcessRequest{ID: "quick", Shell: "echo almost; printf 'no newline'"})
	var m wire.LogMatch
	a.call("POST", "/processes/quick/wait-for-log", wire.WaitForLogRequest{Substring: "newline", TimeoutSeconds: 20}, http.StatusOK, &m)
	if m.Line != "no newline" {
		t.Fatalf("unterminated last line: %+v", m)
	}
	a.callErr("POST", "/processes/quick/wait-for-log", wire.WaitForLogRequest{Substring: "never", TimeoutSeconds: 20}, http.StatusConflict, wire.CodeProcessExited)
	a.callErr("POST", "/processes/quick/wait-for-log", wire.WaitForLogRequest{Regex: "("}, http.StatusBadRequest, "INVALID_REGEX")
	a.callErr("POST", "/processes/quick/wait-for-log", wire.WaitForLogRequest{}, http.StatusBadRequest, "INVALID_MATCH")

	a.startProc(wire.StartProcessRequest{ID: "quiet", Cmd: []string{"sleep", "300"}})
	a.callErr("POST", "/processes/quiet/wait-for-log", wire.WaitForLogRequest{Substring: "x", TimeoutSeconds: 0.2}, http.StatusServiceUnavailable, wire.CodeWaitTimeout)
	a.callErr("POST", "/processes/quiet/wait?timeoutSeconds=0.1", nil, http.StatusServiceUnavailable, wire.CodeWaitTimeout)
	a.call("DELETE", "/processes/quiet", nil, http.StatusNoContent, nil)
}

func TestWaitForPort(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	// The test's own listener stands in for a server the process starts.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ready" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		http.NotFound(w, r)
	}))
	a.startProc(wire.StartProcessRequest{ID: "srv", Cmd: []string{"sleep", "300"}})
	var ready wire.PortReady
	a.call("POST", "/processes/srv/wait-for-port", wire.WaitForPortRequest{Port: port, TimeoutSeconds: 20}, http.StatusOK, &ready)
	a.call("POST", "/processes/srv/wait-for-port", wire.WaitForPortRequest{Port: port, Protocol: "http", Path: "/ready", Status: 204, TimeoutSeconds: 20}, http.StatusOK, &ready)
	if ready.Status != 204 {
		t.Fatalf("ready %+v", ready)
	}
	// A 404 is not the wanted status: that times out.
	a.callErr("POST", "/processes/srv/wait-for-port", wire.WaitForPortRequest{Port: port, Protocol: "http", TimeoutSeconds: 0.3}, http.StatusServiceUnavailable, wire.CodeWaitTimeout)
	free := freePort(t)
	a.callErr("POST", "/processes/srv/wait-for-port", wire.WaitForPortRequest{Port: free, TimeoutSeconds: 0.3}, http.StatusServiceUnavailable, wire.CodeWaitTimeout)
	a.callErr("POST", "/processes/srv/wait-for-port", wire.WaitForPortRequest{Port: 0}, http.StatusBadRequest, "INVALID_PORT")

	a.startProc(wire.StartProcessRequest{ID: "dies", Shell: "sleep 0.2; exit 1"})
	a.callErr("POST", "/processes/dies/wait-for-port", wire.WaitForPortRequest{Port: free, TimeoutSeconds: 20}, http.StatusConflict, wire.CodeProcessExited)
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func TestProcessIDReuseAndShutdown(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	p := a.startProc(wire.StartProcessRequest{ID: "dup", Cmd: []string{"sleep", "300"}})
	a.callErr("POST", "/processes", wire.StartProcessRequest{ID: "dup", Cmd: []string{"true"}}, http.StatusConflict, "PROCESS_EXISTS")
	a.call("POST", "/processes/dup/signal", wire.SignalRequest{Signal: "KILL"}, http.StatusOK, nil)
	a.waitProc("dup")
	a.startProc(wire.StartProcessRequest{ID: "dup", Cmd: []string{"sleep", "300"}}) // an exited one is replaced
	// Stopping the agent stops background processes too.
	last := a.startProc(wire.StartProcessRequest{Cmd: []string{"sleep", "300"}})
	if !strings.HasPrefix(last.ID, "proc-") {
		t.Fatalf("generated id %q", last.ID)
	}
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, last.Pid)
	if alive(p.Pid) {
		t.Fatalf("pid %d survived", p.Pid)
	}
}
