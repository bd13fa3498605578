package sshgw

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/coder/websocket"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/wire"
)

// runPTY runs a shell (or cmd) on a new agent terminal and relays it over
// the channel: bytes both ways on the terminal's WebSocket, window changes
// as its resize frames. The terminal is deleted at the end, which kills
// what still runs on it when the client went away.
func (s *session) runPTY(ctx context.Context, shell bool, cmd string, ready chan<- runner) {
	a, err := s.c.agent()
	if err != nil {
		s.fail(err)
		ready <- noRunner{}
		return
	}
	s.mu.Lock()
	p := *s.pty
	s.mu.Unlock()
	env := map[string]string{}
	for k, v := range s.env {
		env[k] = v
	}
	if p.Term != "" {
		env["TERM"] = p.Term
	}
	req := wire.CreatePTYRequest{ID: "ssh-" + randomHex(6), Env: env, Cols: int(p.Cols), Rows: int(p.Rows)}
	if !shell {
		req.Cmd = []string{"/bin/sh", "-c", cmd}
	} else {
		req.Cmd = []string{"/bin/sh", "-c", loginShell}
	}
	if req.Cols <= 0 || req.Rows <= 0 {
		req.Cols, req.Rows = 80, 24
	}
	t, err := agentapi.Call[wire.PTY](ctx, a, agentapi.CreatePTY, agentapi.Params{}, req)
	if err != nil {
		s.fail(err)
		ready <- noRunner{}
		return
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		agentapi.Call[agentapi.None](dctx, a, agentapi.DeletePTY, agentapi.Params{Path: []string{t.ID}}, nil)
	}()
	ws, _, err := websocket.Dial(ctx, agentapi.WebSocketURL(agentapi.AttachPTY, agentapi.Params{Path: []string{t.ID}, Query: url.Values{"replay": {"true"}}}),
		&websocket.DialOptions{HTTPClient: &http.Client{Transport: a.Transport()}})
	if err != nil {
		s.fail(err)
		ready <- noRunner{}
		return
	}
	defer ws.CloseNow()
	ws.SetReadLimit(16 << 20)
	ready <- &ptyRunner{ctx: ctx, ws: ws}

	go func() { // keystrokes
		buf := make([]byte, 32<<10)
		for {
			n, err := s.ch.Read(buf)
			if n > 0 && ws.Write(ctx, websocket.MessageBinary, buf[:n]) != nil {
				return
			}
			if err != nil {
				return // EOF from the client: the terminal keeps running until it exits
			}
		}
	}()
	for {
		typ, data, err := ws.Read(ctx)
		if err != nil {
			s.ch.CloseWrite()
			s.exit(255, "") // the instance went away under the terminal
			return
		}
		if typ == websocket.MessageBinary {
			if _, err := s.ch.Write(data); err != nil {
				return
			}
			continue
		}
		var ctl wire.PTYControl
		if json.Unmarshal(data, &ctl) == nil && ctl.Type == "exit" {
			s.ch.CloseWrite()
			s.exit(ctl.ExitCode, ctl.Signal)
			return
		}
	}
}

type ptyRunner struct {
	ctx context.Context
	ws  *websocket.Conn
}

func (r *ptyRunner) resize(cols, rows int) {
	b, _ := json.Marshal(wire.PTYControl{Type: "resize", Cols: cols, Rows: rows})
	r.ws.Write(r.ctx, websocket.MessageText, b)
}

// signal has no way to a terminal's program but its keys: the client
// sends ^C itself. A signal request ends nothing here.
func (r *ptyRunner) signal(string) {}
