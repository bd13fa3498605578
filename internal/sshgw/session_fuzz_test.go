package sshgw

import (
	"context"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// FuzzSessionRequests sends a client's channel requests (type and raw
// payload, as a hostile SSH client would) to a session that has already
// started, so nothing is run. Whatever arrives, the session does not panic,
// refuses a second start, keeps its env within bounds and free of names the
// agent could not set, and passes a window change to what runs.
//
//	go test -run '^$' -fuzz '^FuzzSessionRequests$' -fuzztime 1m ./internal/sshgw/
func FuzzSessionRequests(f *testing.F) {
	f.Add(uint8(0), ssh.Marshal(struct{ Name, Value string }{"LANG", "C"}), uint16(3))
	f.Add(uint8(0), ssh.Marshal(struct{ Name, Value string }{"A=B", "x"}), uint16(1))
	f.Add(uint8(1), ssh.Marshal(ptyRequest{Term: "xterm", Cols: 80, Rows: 24}), uint16(1))
	f.Add(uint8(2), ssh.Marshal(struct{ Cols, Rows, Width, Height uint32 }{1 << 31, 0, 0, 0}), uint16(2))
	f.Add(uint8(3), ssh.Marshal(struct{ Name string }{"KILL"}), uint16(1))
	f.Add(uint8(4), []byte{0, 0, 0, 9, 'x'}, uint16(1))
	f.Add(uint8(6), ssh.Marshal(struct{ Value string }{"sftp"}), uint16(1))
	types := []string{"env", "pty-req", "window-change", "signal", "exec", "shell", "subsystem", "x11-req", ""}
	f.Fuzz(func(t *testing.T, typ uint8, payload []byte, repeat uint16) {
		r := &recordingRunner{}
		s := &session{env: map[string]string{}, running: r}
		started := true
		kind := types[int(typ)%len(types)]
		for i := range int(repeat%1024) + 1 {
			p := payload
			if kind == "env" && i > 0 { // many distinct names: the bound must hold
				var kv struct{ Name, Value string }
				if ssh.Unmarshal(payload, &kv) == nil {
					kv.Name += strings.Repeat("_", i%7) + string(rune('A'+i%26)) + string(rune('A'+i/26%26))
					p = ssh.Marshal(kv)
				}
			}
			ok := s.request(context.Background(), &ssh.Request{Type: kind, Payload: p}, &started, nil)
			switch kind {
			case "exec", "shell", "subsystem", "pty-req", "env":
				if ok {
					t.Fatalf("%s accepted after the start", kind)
				}
			}
		}
		// Before the start: env requests shape the session, within bounds.
		fresh := &session{env: map[string]string{}}
		notStarted := false
		for i := range int(repeat%1024) + 1 {
			var kv struct{ Name, Value string }
			if ssh.Unmarshal(payload, &kv) != nil {
				break
			}
			kv.Name += string(rune('a'+i%26)) + string(rune('a'+i/26%26))
			fresh.request(context.Background(), &ssh.Request{Type: "env", Payload: ssh.Marshal(kv)}, &notStarted, nil)
		}
		size := 0
		for k, v := range fresh.env {
			if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
				t.Fatalf("env took %q=%q", k, v)
			}
			size += len(k) + len(v)
		}
		if len(fresh.env) > maxEnvVars || size > maxEnvBytes {
			t.Fatalf("env grew to %d names, %d bytes", len(fresh.env), size)
		}
		if kind == "window-change" {
			var w struct{ Cols, Rows, Width, Height uint32 }
			if ssh.Unmarshal(payload, &w) == nil && (r.cols != int(w.Cols) || r.rows != int(w.Rows)) {
				t.Fatalf("window-change %dx%d reached the runner as %dx%d", w.Cols, w.Rows, r.cols, r.rows)
			}
		}
	})
}

type recordingRunner struct{ cols, rows int }

func (r *recordingRunner) resize(cols, rows int) { r.cols, r.rows = cols, rows }
func (r *recordingRunner) signal(string)         {}
