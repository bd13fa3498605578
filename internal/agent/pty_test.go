package agent

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/sbxhq/sbx/wire"
)

// termClient is an attached terminal in a test.
type termClient struct {
	t    *testing.T
	conn *websocket.Conn
	seen strings.Builder
	exit *wire.PTYControl
}

func (a *testAgent) attach(id string) *termClient {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws://agent/ptys/"+id+"/attach", &websocket.DialOptions{HTTPClient: a.http})
	if err != nil {
		a.t.Fatalf("attach: %v", err)
	}
	a.t.Cleanup(func() { conn.CloseNow() })
	return &termClient{t: a.t, conn: conn}
}

func (c *termClient) send(s string) {
	c.t.Helper()
	if err := c.conn.Write(context.Background(), websocket.MessageBinary, []byte(s)); err != nil {
		c.t.Fatal(err)
	}
}

// expect reads output until it contains want.
func (c *termClient) expect(want string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	for !strings.Contains(c.seen.String(), want) {
		typ, data, err := c.conn.Read(ctx)
		if err != nil {
			c.t.Fatalf("waiting for %q: %v; output so far %q", want, err, c.seen.String())
		}
		if typ == websocket.MessageBinary {
			c.seen.Write(data)
			continue
		}
		var ctl wire.PTYControl
		json.Unmarshal(data, &ctl)
		if ctl.Type == "exit" {
			c.exit = &ctl
			if !strings.Contains(c.seen.String(), want) {
				c.t.Fatalf("exited (%+v) before %q; output %q", ctl, want, c.seen.String())
			}
		}
	}
}

// waitExit reads to the exit frame and the close.
func (c *termClient) waitExit() wire.PTYControl {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	for c.exit == nil {
		typ, data, err := c.conn.Read(ctx)
		if err != nil {
			c.t.Fatalf("waiting for exit: %v; output %q", err, c.seen.String())
		}
		if typ == websocket.MessageBinary {
			c.seen.Write(data)
			continue
		}
		var ctl wire.PTYControl
		json.Unmarshal(data, &ctl)
		if ctl.Type == "exit" {
			c.exit = &ctl
		}
	}
	if _, _, err := c.conn.Read(ctx); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		c.t.Fatalf("after exit: %v, want a normal close", err)
	}
	return *c.exit
}

func TestPTYPromptResizeReattach(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	var p wire.PTY
	a.call("POST", "/ptys", wire.CreatePTYRequest{ID: "t1", Cmd: []string{"/bin/sh"}, Cols: 100, Rows: 30, Env: map[string]string{"PS1": "$ "}}, http.StatusCreated, &p)
	if p.Cols != 100 || p.State != wire.ProcessRunning {
		t.Fatalf("created %+v", p)
	}
	c := a.attach("t1")
	c.send(`read -p "name? " n; echo "hello $n"` + "\n")
	c.expect("name? ")
	c.send("bob\n")
	c.expect("hello bob")
	c.send("stty size; tty\n")
	c.expect("30 100")
	c.expect("/dev/pts/")
	resize, _ := json.Marshal(wire.PTYControl{Type: "resize", Cols: 120, Rows: 40})
	c.conn.Write(context.Background(), websocket.MessageText, resize)
	c.send("stty size\n")
	c.expect("40 120")

	// Detach; the shell lives on, and a new client gets the recent output.
	c.conn.Close(websocket.StatusNormalClosure, "")
	c2 := a.attach("t1")
	c2.expect("hello bob")
	c2.send("exit 3\n")
	if ex := c2.waitExit(); ex.ExitCode != 3 {
		t.Fatalf("exit %+v", ex)
	}
	a.call("GET", "/ptys/t1", nil, http.StatusOK, &p)
	if p.State != wire.ProcessExited || *p.ExitCode != 3 {
		t.Fatalf("after exit %+v", p)
	}
	// Attaching to an exited terminal replays and says how it ended.
	c3 := a.attach("t1")
	if ex := c3.waitExit(); ex.ExitCode != 3 || !strings.Contains(c3.seen.String(), "hello bob") {
		t.Fatalf("late attach: %+v %q", ex, c3.seen.String())
	}
}

func TestPTYKillAndErrors(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	var p wire.PTY
	a.call("POST", "/ptys", wire.CreatePTYRequest{Cmd: []string{"/bin/sh", "-c", "sleep 300 & sleep 300"}}, http.StatusCreated, &p)
	if !strings.HasPrefix(p.ID, "pty-") || p.Cols != 80 || p.Rows != 24 {
		t.Fatalf("defaults %+v", p)
	}
	var list []wire.PTY
	a.call("GET", "/ptys", nil, http.StatusOK, &list)
	if len(list) != 1 {
		t.Fatalf("list %+v", list)
	}
	a.call("DELETE", "/ptys/"+p.ID, nil, http.StatusNoContent, nil)
	waitGone(t, p.Pid)
	a.callErr("GET", "/ptys/"+p.ID, nil, http.StatusNotFound, "PTY_NOT_FOUND")
	a.callErr("POST", "/ptys", wire.CreatePTYRequest{Cols: 5000}, http.StatusBadRequest, "INVALID_SIZE")
	a.callErr("POST", "/ptys", wire.CreatePTYRequest{Cmd: []string{"no-such-program-sbx"}}, http.StatusBadRequest, "COMMAND_NOT_FOUND")
	a.callErr("GET", "/ptys/nope/attach", nil, http.StatusNotFound, "PTY_NOT_FOUND")
}
