package sshgw

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/url"
	"time"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/sdk"
)

// runProcess runs cmd (a shell command line, as sshd runs it with the
// user's shell) as an agent background process: the client's data goes to
// its stdin as it comes, its output streams back as stdout and stderr
// (extended data), and its end is the exit status. The process is deleted
// at the end, killing its group when the client left first.
//
// The agent keeps the last 4 MiB of a process's output for readers that
// fall behind; a client reading slower than that loses the oldest output
// and is told so on stderr.
func (s *session) runProcess(ctx context.Context, cmd string, ready chan<- runner) {
	a, err := s.c.agent()
	if err != nil {
		s.fail(err)
		ready <- noRunner{}
		return
	}
	var p sdk.Process
	req := sdk.StartProcessRequest{ID: "ssh-" + randomHex(6), Shell: cmd, Env: s.env}
	if err := call(ctx, a, agentapi.StartProcess, agentapi.StartProcess.Path, nil, req, &p); err != nil {
		s.fail(err)
		ready <- noRunner{}
		return
	}
	base := "/processes/" + url.PathEscape(p.ID)
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		call(dctx, a, agentapi.DeleteProcess, base, nil, nil, nil)
	}()
	ready <- &processRunner{ctx: ctx, a: a, base: base}
	go s.pumpStdin(ctx, a, base)

	resp, err := a.Forward(ctx, agentapi.Request{Method: agentapi.ProcessLogs.Method, Path: base + "/logs", RawQuery: "follow=true"})
	if err != nil {
		s.fail(err)
		return
	}
	defer resp.Body.Close()
	rd := agentapi.NewReader(resp.Body, agentapi.MaxLine)
	var seq int64
	for {
		line, err := rd.Next()
		if err != nil {
			s.ch.CloseWrite()
			s.exit(255, "")
			return
		}
		var ev sdk.ExecEvent
		if json.Unmarshal(line, &ev) != nil {
			continue
		}
		if ev.Seq > 0 {
			if ev.Seq > seq+1 {
				s.ch.Stderr().Write([]byte("\r\nsbx: output was lost: the SSH client read slower than the command wrote\r\n"))
			}
			seq = ev.Seq
		}
		switch ev.Type {
		case "stdout":
			if _, err := s.ch.Write(ev.Data); err != nil {
				return
			}
		case "stderr":
			if _, err := s.ch.Stderr().Write(ev.Data); err != nil {
				return
			}
		case "exit":
			s.ch.CloseWrite()
			s.exit(ev.ExitCode, ev.Signal)
			return
		case "error":
			if ev.Error != nil {
				s.ch.Stderr().Write([]byte("sbx: " + ev.Error.Message + "\n"))
			}
			s.ch.CloseWrite()
			s.exit(255, "")
			return
		}
	}
}

// pumpStdin writes what the client sends to the process's stdin, and
// closes it at the client's EOF.
func (s *session) pumpStdin(ctx context.Context, a *agentapi.Client, base string) {
	buf := make([]byte, 64<<10)
	for {
		n, err := s.ch.Read(buf)
		if n > 0 {
			wctx, cancel := context.WithTimeout(ctx, agentapi.CallTimeout)
			werr := send(wctx, a, agentapi.Request{Method: agentapi.WriteStdin.Method, Path: base + "/stdin",
				Body: bytes.NewReader(buf[:n]), ContentLength: int64(n), ContentType: "application/octet-stream"}, nil)
			cancel()
			if werr != nil {
				return // exited, or stdin closed by the program
			}
		}
		if err == io.EOF {
			call(ctx, a, agentapi.CloseStdin, base+"/stdin/close", nil, nil, nil)
			return
		}
		if err != nil {
			return
		}
	}
}

type processRunner struct {
	ctx  context.Context
	a    *agentapi.Client
	base string
}

// resize: a process without a terminal has no size.
func (r *processRunner) resize(int, int) {}

func (r *processRunner) signal(name string) {
	call(r.ctx, r.a, agentapi.SignalProcess, r.base+"/signal", nil, sdk.SignalRequest{Signal: name}, nil)
}
