package sshgw

import (
	"bytes"
	"context"
	"encoding/json"
	"io"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/wire"
)

// runExec runs cmd (a shell command line, as sshd runs it with the user's
// shell) on the agent's exec/attach: what the client sends streams to its
// stdin, its stdout and stderr (extended data) stream back, and its end is
// the exit status. Both directions have backpressure: a slow client slows
// the command, nothing is dropped. The command is killed when the client
// goes away (the request's context ends).
func (s *session) runExec(ctx context.Context, cmd string, ready chan<- runner) {
	a, err := s.c.agent()
	if err != nil {
		s.fail(err)
		ready <- noRunner{}
		return
	}
	line, err := json.Marshal(wire.ExecRequest{Shell: cmd, Env: s.env})
	if err != nil {
		s.fail(err)
		ready <- noRunner{}
		return
	}
	ready <- noRunner{} // signals have no way to an exec; ^C needs a terminal (ssh -t)
	body := io.MultiReader(bytes.NewReader(append(line, '\n')), s.ch)
	resp, err := agentapi.Open(ctx, a, agentapi.ExecAttach, agentapi.Params{}, body, agentapi.ContentTypeNDJSON)
	if err != nil {
		s.fail(err)
		return
	}
	defer resp.Body.Close()
	rd := agentapi.NewReader(resp.Body, agentapi.MaxLine)
	for {
		line, err := rd.Next()
		if err != nil {
			s.ch.CloseWrite()
			s.exit(255, "") // the instance went away mid-command
			return
		}
		var ev wire.ExecEvent
		if json.Unmarshal(line, &ev) != nil {
			continue
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
