package agent

import (
	"net/http"
	"os"
	"testing"

	"github.com/sbxhq/sbx/wire"
)

// Input typed through POST /ptys/{pty}/input reaches the program, which
// runs as the account asked for on a terminal that is that account's.
func TestPTYInputAndUser(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("running as another account needs root")
	}
	a := startAgent(t)
	var p wire.PTY
	a.call("POST", "/ptys", wire.CreatePTYRequest{ID: "u1", Cmd: []string{"/bin/sh"}, User: "1234:5678", Cwd: "/", Env: map[string]string{"PS1": "$ "}}, http.StatusCreated, &p)
	c := a.attach("u1")
	a.call("POST", "/ptys/u1/input", []byte("echo id=$(id -u):$(id -g) tty=$(stat -c %u \"$(tty)\")\n"), http.StatusNoContent, nil)
	c.expect("id=1234:5678 tty=1234")
	a.call("POST", "/ptys/u1/input", []byte("exit 4\n"), http.StatusNoContent, nil)
	if ex := c.waitExit(); ex.ExitCode != 4 {
		t.Fatalf("exit %+v", ex)
	}
	a.callErr("POST", "/ptys/u1/input", []byte("more\n"), http.StatusConflict, wire.CodePTYExited)
	a.callErr("POST", "/ptys/ghost/input", []byte("x"), http.StatusNotFound, wire.CodePTYNotFound)
	a.callErr("POST", "/ptys", wire.CreatePTYRequest{User: "no-such-account"}, http.StatusBadRequest, wire.CodeUnknownUser)
}
