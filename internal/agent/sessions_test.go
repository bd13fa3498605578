package agent

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

func (a *testAgent) sessionExec(id, command string, timeout float64) sdk.SessionExecResult {
	a.t.Helper()
	var res sdk.SessionExecResult
	a.call("POST", "/sessions/"+id+"/exec", sdk.SessionExecRequest{Command: command, TimeoutSeconds: timeout}, http.StatusOK, &res)
	return res
}

func TestSessionStatePersists(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	var ss sdk.Session
	a.call("POST", "/sessions", sdk.CreateSessionRequest{ID: "dev", Shell: "/bin/sh", Env: map[string]string{"GREETING": "hi"}}, http.StatusCreated, &ss)
	if ss.ID != "dev" || ss.State != sdk.SessionIdle || ss.Pid <= 0 {
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
	var list []sdk.Session
	a.call("GET", "/sessions", nil, http.StatusOK, &list)
	if len(list) != 1 || list[0].State != sdk.SessionIdle {
		t.Fatalf("list %+v", list)
	}
	// exit ends the shell, and with it the session.
	res := a.sessionExec("dev", "echo bye; exit 4", 0)
	if !res.SessionEnded || res.ExitCode != 4 || res.Stdout != "bye\n" {
		t.Fatalf("exit: %+v", res)
	}
	a.callErr("POST", "/sessions/dev/exec", sdk.SessionExecRequest{Command: "true"}, http.StatusConflict, "SESSION_ENDED")
	a.call("GET", "/sessions/dev", nil, http.StatusOK, &ss)
	if ss.State != sdk.SessionEnded || ss.ExitCode == nil || *ss.ExitCode != 4 {
		t.Fatalf("ended: %+v", ss)
	}
	a.call("DELETE", "/sessions/dev", nil, http.StatusNoContent, nil)
	a.callErr("GET", "/sessions/dev", nil, http.StatusNotFound, "SESSION_NOT_FOUND")
}

func TestSessionTimeout(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	a.call("POST", "/sessions", sdk.CreateSessionRequest{ID: "t", Shell: "/bin/sh", TimeoutSeconds: 30}, http.StatusCreated, nil)
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
	old := sessionInterruptGrace
	sessionInterruptGrace = 100 * time.Millisecond
	t.Cleanup(func() { sessionInterruptGrace = old })
	a := startAgent(t)
	a.call("POST", "/sessions", sdk.CreateSessionRequest{ID: "t", Shell: "/bin/sh"}, http.StatusCreated, nil)
	// A builtin loop cannot be interrupted from outside: the shell goes.
	res := a.sessionExec("t", "while :; do :; done", 0.2)
	if !res.TimedOut || !res.SessionEnded {
		t.Fatalf("builtin loop: %+v", res)
	}
	a.callErr("POST", "/sessions/t/exec", sdk.SessionExecRequest{Command: "true"}, http.StatusConflict, "SESSION_ENDED")
}

func TestSessionStream(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	a.call("POST", "/sessions", sdk.CreateSessionRequest{ID: "s"}, http.StatusCreated, nil)
	ev := a.streamPath(context.Background(), "/sessions/s/exec?stream=true", sdk.SessionExecRequest{Command: "echo a; echo b >&2; exit_code=3; (exit $exit_code)"})
	exit, stdout, stderr := ev.untilExit()
	if exit.ExitCode != 3 || stdout != "a\n" || stderr != "b\n" {
		t.Fatalf("stream: %+v %q %q", exit, stdout, stderr)
	}
	// Two clients at once take turns.
	done := make(chan sdk.SessionExecResult, 2)
	for range 2 {
		go func() {
			var res sdk.SessionExecResult
			a.call("POST", "/sessions/s/exec", sdk.SessionExecRequest{Command: "n=$((n+1)); echo $n"}, http.StatusOK, &res)
			done <- res
		}()
	}
	got := []string{strings.TrimSpace((<-done).Stdout), strings.TrimSpace((<-done).Stdout)}
	if !(got[0] == "1" && got[1] == "2" || got[0] == "2" && got[1] == "1") {
		t.Fatalf("concurrent commands: %q", got)
	}
}
