package sshgw

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz/authztest"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// asleep is a sandbox whose agent is never there: a channel the gate
// admits is then rejected as unavailable, which tells it got past the gate
// (and that nothing started the sandbox before).
type asleep struct{ started *int }

func (a asleep) Agent(context.Context, string) (*agentapi.Client, *store.Sandbox, error) {
	*a.started++
	return nil, nil, errors.New("asleep")
}
func (asleep) Get(context.Context, string) (*store.Sandbox, error) {
	return &store.Sandbox{ID: "sbx-1", State: wire.StateStopped}, nil
}
func (asleep) Hold(context.Context, string) func() { return func() {} }
func (asleep) EventsChanged() <-chan struct{}      { return nil }

// TestEveryChannelGated walks the gateway's channel types: each refuses a
// login without an access, refuses an access whose key lacks the type's
// scope (audited) without starting the sandbox, and applies the key's
// rate limit.
func TestEveryChannelGated(t *testing.T) {
	h := authztest.New(t)
	access := NewAccess(&memStore{}, h.Gate.Keys.(auth.KeyLookup))
	started := 0
	gw, err := New(Config{Sandboxes: asleep{&started}, Access: access, Gate: h.Gate, HostKeyFile: filepath.Join(t.TempDir(), "host_key")})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go gw.Serve(ctx, ln)

	open := func(chType, key string, p auth.Principal) int {
		user := tokenPrefix + strings.Repeat("0", 64) // no such access
		if key != "" {
			_, tok, err := access.Create(ctx, "sbx-1", p, wire.CreateSSHAccessRequest{})
			if err != nil {
				t.Fatal(err)
			}
			user = tok
		}
		c, err := ssh.Dial("tcp", ln.Addr().String(), &ssh.ClientConfig{User: user, HostKeyCallback: ssh.InsecureIgnoreHostKey()})
		if err != nil {
			return 401
		}
		defer c.Close()
		_, _, err = c.OpenChannel(chType, nil)
		var oe *ssh.OpenChannelError
		switch {
		case errors.As(err, &oe) && oe.Reason == ssh.Prohibited && strings.HasPrefix(oe.Message, string(wire.CodeMissingScope)):
			return 403
		case errors.As(err, &oe) && oe.Reason == ssh.Prohibited && strings.HasPrefix(oe.Message, string(wire.CodeRateLimited)):
			return 429
		case errors.As(err, &oe) && oe.Reason == ssh.ConnectionFailed:
			return 200 // admitted; the sandbox is asleep
		}
		t.Fatalf("open %s: %v", chType, err)
		return 0
	}
	for chType, need := range channelOps {
		before := started
		h.Check(t, authztest.Op{
			Name: "SSH channel " + chType, Need: need, Method: "SSH", Path: "/ssh/sbx-1/" + chType,
			Do: func(key string, p auth.Principal) int { return open(chType, key, p) },
		}, nil)
		if started != before {
			t.Errorf("SSH channel %s: refused channels started the sandbox %d times", chType, started-before)
		}
		// A connection and its channel are two steps of the key's budget.
		limits := h.Gate.Limits
		h.Gate.Limits = nil
		key, p := h.Key("acme", need.Scope)
		if got := open(chType, key, p); got != 200 {
			t.Errorf("SSH channel %s with its scope: %d", chType, got)
		}
		h.Gate.Limits = limits
	}
}
