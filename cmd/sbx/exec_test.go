package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/sdk"
)

func TestSplitExecArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		dash int
		name string
		argv []string
	}{
		{[]string{"box", "ls"}, -1, "box", []string{"ls"}},
		{[]string{"box", "ls", "-la"}, 1, "box", []string{"ls", "-la"}},
		{[]string{"box", "sh", "-c", "echo --"}, 1, "box", []string{"sh", "-c", "echo --"}},
	} {
		name, argv, err := splitExecArgs(tc.args, tc.dash)
		if err != nil || name != tc.name || !reflect.DeepEqual(argv, tc.argv) {
			t.Errorf("%q dash %d: got %q %q %v", tc.args, tc.dash, name, argv, err)
		}
	}
	for _, tc := range []struct {
		args []string
		dash int
	}{
		{[]string{"box"}, -1},         // no command
		{[]string{"box"}, 1},          // nothing after --
		{[]string{"ls"}, 0},           // no name before --
		{[]string{"a", "b", "ls"}, 2}, // two names
		{nil, -1},
	} {
		var u *usageError
		if _, _, err := splitExecArgs(tc.args, tc.dash); !errors.As(err, &u) {
			t.Errorf("%q dash %d: err = %v, want usage error", tc.args, tc.dash, err)
		}
	}
}

func TestExecExitCode(t *testing.T) {
	for _, tc := range []struct {
		res  sdk.ExecResult
		want int
	}{
		{sdk.ExecResult{ExitCode: 0}, 0},
		{sdk.ExecResult{ExitCode: 3}, 3},
		{sdk.ExecResult{ExitCode: 255}, 255},
		{sdk.ExecResult{ExitCode: -1, Signal: "SIGKILL"}, 137},
		{sdk.ExecResult{ExitCode: 0, Signal: "TERM"}, 143},
		{sdk.ExecResult{Signal: "2"}, 130},
		{sdk.ExecResult{ExitCode: 0, Signal: "SIGBOGUS"}, 1},
		{sdk.ExecResult{ExitCode: 300}, 1},
		{sdk.ExecResult{ExitCode: -1}, 1},
	} {
		if got := execExitCode(&tc.res); got != tc.want {
			t.Errorf("%+v: got %d, want %d", tc.res, got, tc.want)
		}
	}
}

// execDaemon answers every streamed exec with events.
func execDaemon(t *testing.T, got *sdk.ExecRequest, events ...sdk.ExecEvent) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/sandboxes/{id}/exec", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("stream") != "true" {
			t.Error("exec not streamed")
		}
		json.NewDecoder(r.Body).Decode(got)
		enc := json.NewEncoder(w)
		for _, ev := range events {
			enc.Encode(ev)
		}
	})
	fakeDaemon(t, mux)
}

func TestExecStreamsAndExitsWithCommandCode(t *testing.T) {
	var got sdk.ExecRequest
	execDaemon(t, &got,
		sdk.ExecEvent{Type: "start", Pid: 1},
		sdk.ExecEvent{Type: "stdout", Data: []byte("out\n")},
		sdk.ExecEvent{Type: "stderr", Data: []byte("err\n")},
		sdk.ExecEvent{Type: "exit", ExitCode: 42},
	)
	r := runCLI(t, "input", "exec", "-i", "--cwd", "/tmp", "--env", "K=V", "--timeout", "2.5", "box", "--", "sh", "-c", "exit 42")
	if r.code != 42 || r.stdout != "out\n" || r.stderr != "err\n" {
		t.Errorf("got %+v", r)
	}
	want := sdk.ExecRequest{Cmd: []string{"sh", "-c", "exit 42"}, Cwd: "/tmp", Env: map[string]string{"K": "V"}, Stdin: "input", TimeoutSeconds: 2.5}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("request %+v, want %+v", got, want)
	}
}

func TestExecKilledBySignal(t *testing.T) {
	var got sdk.ExecRequest
	execDaemon(t, &got, sdk.ExecEvent{Type: "exit", Signal: "SIGKILL", TimedOut: true})
	r := runCLI(t, "", "exec", "--timeout", "1", "box", "--", "sleep", "9")
	if r.code != 137 || !strings.Contains(r.stderr, "timed out after 1s") {
		t.Errorf("got %+v", r)
	}
	if got.Stdin != "" {
		t.Errorf("stdin sent without -i: %q", got.Stdin)
	}
}

func TestExecStreamWithoutExitFails(t *testing.T) {
	var got sdk.ExecRequest
	execDaemon(t, &got, sdk.ExecEvent{Type: "stdout", Data: []byte("partial")})
	r := runCLI(t, "", "exec", "box", "true")
	if r.code != 125 || r.stdout != "partial" || !strings.Contains(r.stderr, "sbx: exec stream ended before") {
		t.Errorf("got %+v", r)
	}
}

// TestExecDockerFlags: -e, -w and -u are docker exec's --env, --workdir
// and --user.
func TestExecDockerFlags(t *testing.T) {
	var got sdk.ExecRequest
	execDaemon(t, &got, sdk.ExecEvent{Type: "exit"})
	r := runCLI(t, "", "exec", "-e", "K=V", "-e", "L=W", "-w", "/tmp", "-u", "1000:1000", "box", "--", "id")
	want := sdk.ExecRequest{Cmd: []string{"id"}, Cwd: "/tmp", Env: map[string]string{"K": "V", "L": "W"}, User: "1000:1000"}
	if r.code != 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("%+v: request %+v, want %+v", r, got, want)
	}
}

// TestExecExitCodesLikeDocker: 127 for a command that is not there, 126 for
// one that cannot run, 125 for every failure of sbx itself (a missing
// sandbox, a bad flag), each with its message; the command's own code
// otherwise (TestExecStreamsAndExitsWithCommandCode).
func TestExecExitCodesLikeDocker(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/sandboxes/{id}/exec", func(w http.ResponseWriter, r *http.Request) {
		var req sdk.ExecRequest
		json.NewDecoder(r.Body).Decode(&req)
		switch {
		case r.PathValue("id") == "gone":
			replyErr(w, http.StatusNotFound, sdk.CodeSandboxNotFound, `sandbox "gone" not found`)
		case req.Cmd[0] == "nosuch":
			replyErr(w, http.StatusBadRequest, sdk.CodeCommandNotFound, `command "nosuch" not found in PATH /bin`)
		default:
			replyErr(w, http.StatusBadRequest, sdk.CodeCommandNotExecutable, `command "/etc/passwd" is not executable`)
		}
	})
	fakeDaemon(t, mux)
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"exec", "box", "--", "nosuch"}, 127, "COMMAND_NOT_FOUND"},
		{[]string{"exec", "box", "--", "/etc/passwd"}, 126, "COMMAND_NOT_EXECUTABLE"},
		{[]string{"exec", "gone", "--", "true"}, 125, "SANDBOX_NOT_FOUND"},
		{[]string{"exec", "--bogus", "box", "--", "true"}, 125, "unknown flag: --bogus"},
		{[]string{"exec", "box"}, 125, "give a command to run"},
		{[]string{"exec", "-t", "-u", "nobody", "box", "--", "true"}, 125, "-u does not apply with -t"},
	} {
		if r := runCLI(t, "", tc.args...); r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) {
			t.Errorf("%q: %+v, want exit %d and %q", tc.args, r, tc.code, tc.stderr)
		}
	}
}
