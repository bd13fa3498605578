package sshgw

import (
	"context"
	"encoding/binary"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
)

// A session channel carries one shell, command or subsystem. With a PTY
// (pty-req) it runs on an agent terminal; without one on the agent's
// exec/attach, with stdin streaming from the client. Requests before the start (env,
// pty-req) shape it; window-change and signal reach it while it runs.

// loginShell is what "shell" runs: the sandbox's bash if it has one.
const loginShell = `if [ -x /bin/bash ]; then exec /bin/bash -l; else exec /bin/sh -l; fi`

type session struct {
	c   *client
	ch  ssh.Channel
	env map[string]string

	mu      sync.Mutex
	pty     *ptyRequest
	running runner // set once started
}

type ptyRequest struct {
	Term       string
	Cols, Rows uint32
	Width      uint32
	Height     uint32
	Modes      string
}

// runner is a started shell, command or subsystem.
type runner interface {
	resize(cols, rows int)
	signal(name string)
}

func (c *client) serveSession(nch ssh.NewChannel) {
	ch, reqs, err := nch.Accept()
	if err != nil {
		return
	}
	s := &session{c: c, ch: ch, env: map[string]string{}}
	ctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	done := make(chan struct{})
	started := false
	for {
		select {
		case req, ok := <-reqs:
			if !ok {
				cancel()
				if started {
					<-done
				}
				ch.Close()
				return
			}
			ok = s.request(ctx, req, &started, done)
			if req.WantReply {
				req.Reply(ok, nil)
			}
		case <-done:
			ch.Close()
			go ssh.DiscardRequests(reqs)
			return
		}
	}
}

// request answers one channel request; starting requests are accepted
// once.
func (s *session) request(ctx context.Context, req *ssh.Request, started *bool, done chan struct{}) bool {
	switch req.Type {
	case "env":
		var kv struct{ Name, Value string }
		if ssh.Unmarshal(req.Payload, &kv) != nil || *started || !envOK(s.env, kv.Name, kv.Value) {
			return false
		}
		s.env[kv.Name] = kv.Value
		return true
	case "pty-req":
		var p ptyRequest
		if ssh.Unmarshal(req.Payload, &p) != nil || *started {
			return false
		}
		s.mu.Lock()
		s.pty = &p
		s.mu.Unlock()
		return true
	case "window-change":
		var w struct{ Cols, Rows, Width, Height uint32 }
		if ssh.Unmarshal(req.Payload, &w) != nil {
			return false
		}
		s.mu.Lock()
		if s.pty != nil {
			s.pty.Cols, s.pty.Rows = w.Cols, w.Rows
		}
		r := s.running
		s.mu.Unlock()
		if r != nil {
			r.resize(int(w.Cols), int(w.Rows))
		}
		return true
	case "signal":
		var sig struct{ Name string }
		if ssh.Unmarshal(req.Payload, &sig) != nil {
			return false
		}
		s.mu.Lock()
		r := s.running
		s.mu.Unlock()
		if r != nil {
			r.signal(sig.Name)
		}
		return true
	case "shell", "exec", "subsystem":
		if *started {
			return false
		}
		var arg struct{ Value string }
		if req.Type != "shell" && ssh.Unmarshal(req.Payload, &arg) != nil {
			return false
		}
		if req.Type == "subsystem" && arg.Value != "sftp" {
			return false
		}
		*started = true
		ready := make(chan runner, 1)
		go func() {
			defer close(done)
			switch {
			case req.Type == "subsystem":
				s.serveSFTP(ctx, ready) // sftp.go
			case s.pty != nil:
				s.runPTY(ctx, req.Type == "shell", arg.Value, ready) // pty.go
			default:
				cmd := arg.Value
				if req.Type == "shell" {
					cmd = loginShell
				}
				s.runExec(ctx, cmd, ready) // exec.go
			}
		}()
		r := <-ready
		s.mu.Lock()
		s.running = r
		s.mu.Unlock()
		return r != nil
	}
	return false
}

// Bounds of a session's env requests: a client may not grow the daemon's
// memory without limit, nor pass a name the agent could not set.
const (
	maxEnvVars  = 256
	maxEnvBytes = 64 << 10 // names and values together
)

// envOK reports whether env may take name=value.
func envOK(env map[string]string, name, value string) bool {
	if name == "" || strings.ContainsAny(name, "=\x00") || strings.ContainsRune(value, 0) {
		return false
	}
	if _, ok := env[name]; !ok && len(env) >= maxEnvVars {
		return false
	}
	size := len(name) + len(value)
	for k, v := range env {
		if k != name {
			size += len(k) + len(v)
		}
	}
	return size <= maxEnvBytes
}

// exit reports the program's end to the client: exit-status, or
// exit-signal when a signal killed it.
func (s *session) exit(code int, signal string) {
	if signal != "" {
		name := signal
		if len(name) > 3 && name[:3] == "SIG" {
			name = name[3:]
		}
		s.ch.SendRequest("exit-signal", false, ssh.Marshal(struct {
			Signal     string
			CoreDumped bool
			Message    string
			Lang       string
		}{name, false, "", ""}))
		return
	}
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(code))
	s.ch.SendRequest("exit-status", false, b[:])
}

// fail tells the client why nothing runs, on stderr, and exits 255 (what
// ssh itself exits with when the connection fails).
func (s *session) fail(err error) {
	s.ch.Stderr().Write([]byte("sbx: " + err.Error() + "\r\n"))
	s.exit(255, "")
}

type noRunner struct{}

func (noRunner) resize(int, int) {}
func (noRunner) signal(string)   {}
