package agent

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/wire"
)

func (a *testAgent) sessionExec(id, command string, timeout float64) wire.SessionExecResult {
	a.t.Helper()
	var res wire.SessionExecResult
	a.call("POST", "/sessions/"+id+"/exec", wire.SessionExecRequest{Command: command, TimeoutSeconds: timeout}, http.StatusOK, &res)
	return res
}

func TestSessionStatePersists(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	var ss wire.Session
	a.call("POST", "/sessions", wire.CreateSessionRequest{ID: "dev", Shell: "/bin/sh", Env: map[string]string{"GREETING": "hi"}}, http.StatusCreated, &ss)
	if ss.ID != "dev" || ss.State != wire.SessionIdle || ss.Pid <= 0 {
		t.Fatalf("created %+v", ss)
	}
	steps := []struct {
		cmd, stdout, stderr string
		code                int
	}{
		{"cd /tmp && mkdir -p sbx-sess-test && cd sbx-sess-test", "", "", 0},
		{"pwd", "/tmp/sbx-sess-test\n", "", 0},
		{"export FOO='it''s here'; x=local", "", "", 0},
		{`echo "$FOO $x $GREETING"`, "its here local hi\n", "", 0},
		{"greet() { echo \"hello $1\"; }", "", "", 0},
		{"greet you; echo oops >&2; false", "hello you\n", "oops\n", 1},
		{"printf 'no newline'", "no newline", "", 0},
		{"cat", "", "", 0}, // stdin is /dev/null, not the protocol
		{`echo "unterminated`, "", "", 2},
		{"echo still here; cd ..; rmdir sbx-sess-test", "still here\n", "", 0},
	}
	for _, st := range steps {
		res := a.sessionExec("dev", st.cmd, 0)
		if res.ExitCode != st.code || res.Stdout != st.stdout || (st.code != 2 && res.Stderr != st.stderr) || res.SessionEnded {
			t.Fatalf("%q: got %+v, want code %d stdout %q stderr %q", st.cmd, res, st.code, st.stdout, st.stderr)
		}
		if st.code == 2 && res.Stderr == "" {
			t.Fatalf("%q: a syntax error without a message", st.cmd)
		}
	}
	var list []wire.Session
	a.call("GET", "/sessions", nil, http.StatusOK, &list)
	if len(list) != 1 || list[0].State != wire.SessionIdle {
		t.Fatalf("list %+v", list)
	}
	// exit ends the shell (the next command starts another, see
	// TestSessionRestartsEndedShell).
	res := a.sessionExec("dev", "echo bye; exit 4", 0)
	if !res.SessionEnded || res.ExitCode != 4 || res.Stdout != "bye\n" || res.ShellRestarted {
		t.Fatalf("exit: %+v", res)
	}
	a.call("GET", "/sessions/dev", nil, http.StatusOK, &ss)
	if ss.State != wire.SessionEnded || ss.ExitCode == nil || *ss.ExitCode != 4 {
		t.Fatalf("ended: %+v", ss)
	}
	a.call("DELETE", "/sessions/dev", nil, http.StatusNoContent, nil)
	a.callErr("GET", "/sessions/dev", nil, http.StatusNotFound, "SESSION_NOT_FOUND")
}

func TestSessionTimeout(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	a.call("POST", "/sessions", wire.CreateSessionRequest{ID: "t", Shell: "/bin/sh", TimeoutSeconds: 30}, http.StatusCreated, nil)
	a.sessionExec("t", "cd /tmp", 0)
	// A command's processes (grandchildren too) are killed; the shell stays.
	res := a.sessionExec("t", "sh -c 'sleep 300 & echo $!; wait'; sleep 300", 0.5)
	if !res.TimedOut || res.SessionEnded || res.ExitCode != 128+9 {
		t.Fatalf("timeout: %+v", res)
	}
	grandchild, err := strconv.Atoi(strings.TrimSpace(res.Stdout))
	if err != nil {
		t.Fatalf("stdout %q", res.Stdout)
	}
	waitGone(t, grandchild)
	if res := a.sessionExec("t", "pwd", 0); res.Stdout != "/tmp\n" {
		t.Fatalf("after timeout: %+v", res)
	}
}

func TestSessionTimeoutInBuiltin(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	a.call("POST", "/sessions", wire.CreateSessionRequest{ID: "t", Shell: "/bin/sh"}, http.StatusCreated, nil)
	// A builtin loop is stopped by the interrupt trap; the shell stays.
	res := a.sessionExec("t", "cd /tmp; while :; do :; done; echo after", 0.2)
	if !res.TimedOut || res.SessionEnded || res.ExitCode != 128+9 || res.Stdout != "" {
		t.Fatalf("builtin loop: %+v", res)
	}
	if res := a.sessionExec("t", "pwd", 0); res.Stdout != "/tmp\n" || res.ShellRestarted {
		t.Fatalf("after the loop: %+v", res)
	}
}

func TestSessionTimeoutShellIgnoresInterrupt(t *testing.T) {
	old := sessionInterruptGrace
	sessionInterruptGrace = 100 * time.Millisecond
	t.Cleanup(func() { sessionInterruptGrace = old })
	a := startAgent(t)
	a.call("POST", "/sessions", wire.CreateSessionRequest{ID: "t", Shell: "/bin/sh"}, http.StatusCreated, nil)
	// A shell that ignores the interrupt is killed, and the next command
	// gets a fresh one.
	res := a.sessionExec("t", "trap '' USR1; while :; do :; done", 0.2)
	if !res.TimedOut || !res.SessionEnded || res.ExitCode != 128+9 {
		t.Fatalf("builtin loop: %+v", res)
	}
	if res := a.sessionExec("t", "echo fresh", 0); res.Stdout != "fresh\n" || !res.ShellRestarted {
		t.Fatalf("after: %+v", res)
	}
}

// TestSessionTimeoutStopsCommandLine: a timeout stops the rest of the list
// too, not only the process that ran at the deadline (issue 13.20).
func TestSessionTimeoutStopsCommandLine(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"/bin/sh", "/bin/bash"} {
		if executable(shell) != nil {
			continue
		}
		a := startAgent(t)
		var ss wire.Session
		a.call("POST", "/sessions", wire.CreateSessionRequest{ID: "t", Shell: shell}, http.StatusCreated, &ss)
		mark := filepath.Join(t.TempDir(), "survivor")
		res := a.sessionExec("t", "cd /tmp; x=kept; sleep 10; echo survivor; touch "+mark, 0.3)
		// (dash reports its killed child with "Killed" on stderr.)
		if !res.TimedOut || res.SessionEnded || res.ExitCode != 128+9 || res.Stdout != "" {
			t.Fatalf("%s: timeout: %+v", shell, res)
		}
		if _, err := os.Stat(mark); err == nil {
			t.Fatalf("%s: the rest of the command line ran after the timeout", shell)
		}
		// What ran before the deadline is kept, the shell too.
		res = a.sessionExec("t", `echo "$(pwd) $x"; sleep 0.2; echo done`, 0)
		if res.Stdout != "/tmp kept\ndone\n" || res.ExitCode != 0 || res.TimedOut || res.ShellRestarted {
			t.Fatalf("%s: after the timeout: %+v", shell, res)
		}
		var now wire.Session
		a.call("GET", "/sessions/t", nil, http.StatusOK, &now)
		if now.Pid != ss.Pid || now.State != wire.SessionIdle {
			t.Fatalf("%s: session after a timeout: %+v (was %+v)", shell, now, ss)
		}
	}
}

// TestSessionRestartsEndedShell: a session whose shell exited starts a
// fresh one, from its original cwd and env, for the next command
// (issue 13.19).
func TestSessionRestartsEndedShell(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	var ss wire.Session
	a.call("POST", "/sessions", wire.CreateSessionRequest{ID: "r", Shell: "/bin/sh", Cwd: "/tmp", Env: map[string]string{"FOO": "orig"}}, http.StatusCreated, &ss)
	res := a.sessionExec("r", "cd /; export FOO=changed; sleep 300 >/dev/null 2>&1 & echo $!; exit 42", 0)
	if res.ExitCode != 42 || !res.SessionEnded || res.ShellRestarted {
		t.Fatalf("exit 42: %+v", res)
	}
	leftover, err := strconv.Atoi(strings.TrimSpace(res.Stdout))
	if err != nil {
		t.Fatalf("stdout %q", res.Stdout)
	}
	res = a.sessionExec("r", `echo "$(pwd) $FOO"`, 0)
	if res.ExitCode != 0 || res.Stdout != "/tmp orig\n" || !res.ShellRestarted || res.SessionEnded {
		t.Fatalf("after exit: %+v", res)
	}
	var now wire.Session
	a.call("GET", "/sessions/r", nil, http.StatusOK, &now)
	if now.State != wire.SessionIdle || now.ExitCode != nil || now.Pid == ss.Pid || now.Pid <= 0 {
		t.Fatalf("restarted session: %+v (was %+v)", now, ss)
	}
	if res = a.sessionExec("r", "true", 0); res.ShellRestarted {
		t.Fatalf("restarted twice: %+v", res)
	}
	waitGone(t, leftover) // the old shell's background job went with it

	// The stream says so too, with exit code 0 on the wire.
	a.sessionExec("r", "exit 3", 0)
	resp := a.do("POST", "/sessions/r/exec?stream=true", wire.SessionExecRequest{Command: "true"})
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	lines := strings.Split(strings.TrimSpace(string(body)), "\n")
	var exit map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &exit); err != nil {
		t.Fatalf("stream %q: %v", body, err)
	}
	if exit["type"] != "exit" || exit["exitCode"] != 0.0 || exit["shellRestarted"] != true || exit["sessionEnded"] != false {
		t.Fatalf("exit event %s", lines[len(lines)-1])
	}

	// A deleted session starts nothing again.
	a.sessionExec("r", "exit 5", 0)
	a.call("DELETE", "/sessions/r", nil, http.StatusNoContent, nil)
	a.callErr("POST", "/sessions/r/exec", wire.SessionExecRequest{Command: "true"}, http.StatusNotFound, "SESSION_NOT_FOUND")
}

func TestSessionStream(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	a.call("POST", "/sessions", wire.CreateSessionRequest{ID: "s"}, http.StatusCreated, nil)
	ev := a.streamPath(context.Background(), "/sessions/s/exec?stream=true", wire.SessionExecRequest{Command: "echo a; echo b >&2; exit_code=3; (exit $exit_code)"})
	exit, stdout, stderr := ev.untilExit()
	if exit.ExitCode != 3 || stdout != "a\n" || stderr != "b\n" {
		t.Fatalf("stream: %+v %q %q", exit, stdout, stderr)
	}
	// Two clients at once take turns.
	done := make(chan wire.SessionExecResult, 2)
	for range 2 {
		go func() {
			var res wire.SessionExecResult
			a.call("POST", "/sessions/s/exec", wire.SessionExecRequest{Command: "n=$((n+1)); echo $n"}, http.StatusOK, &res)
			done <- res
		}()
	}
	got := []string{strings.TrimSpace((<-done).Stdout), strings.TrimSpace((<-done).Stdout)}
	if !(got[0] == "1" && got[1] == "2" || got[0] == "2" && got[1] == "1") {
		t.Fatalf("concurrent commands: %q", got)
	}
}
