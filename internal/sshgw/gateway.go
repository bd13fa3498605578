// Package sshgw is the daemon's SSH gateway: standard SSH clients (ssh, scp,
// sftp, editors such as VS Code Remote-SSH) reach a sandbox with an access
// token as the user name, or with a public key registered on the sandbox
// and the sandbox's id as the user name. Everything a client does goes
// through the sandbox Manager and the agent contract: shells and commands
// run on the agent's terminals and its exec with streamed stdin, files move
// through its file operations, ports are forwarded by the agent from inside
// the sandbox. Nothing runs on the host as the user.
package sshgw

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Sandboxes is what the gateway needs of the sandbox Manager.
type Sandboxes interface {
	// Agent returns the sandbox's agent, starting or resuming it.
	Agent(ctx context.Context, idOrName string) (*agentapi.Client, *store.Sandbox, error)
	Get(ctx context.Context, idOrName string) (*store.Sandbox, error)
	// Hold marks the sandbox active until release is called.
	Hold(ctx context.Context, idOrName string) (release func())
	// EventsChanged is closed at the next state change of any sandbox.
	EventsChanged() <-chan struct{}
}

// Config configures a gateway.
type Config struct {
	Sandboxes   Sandboxes
	Access      *Access
	Gate        *authz.Gate // every connection and channel's way in (channelOps)
	HostKeyFile string      // created on first use, 0600
	Log         *slog.Logger
}

// Limits that keep a flood of connections or failed logins from hurting
// the daemon.
const (
	handshakeTimeout = 20 * time.Second
	maxHandshakes    = 64 // key exchanges under way at once
	failureBurst     = 20 // failed logins an address may make at once …
	failureRefill    = 3 * time.Second
	maxAuthTries     = 10
)

// Server is the SSH gateway.
type Server struct {
	cfg        Config
	hostKey    ssh.Signer
	limiter    *failureLimiter
	handshakes chan struct{}
	log        *slog.Logger
	wg         sync.WaitGroup
}

// New returns a gateway, loading or creating its host key.
func New(cfg Config) (*Server, error) {
	key, err := loadHostKey(cfg.HostKeyFile)
	if err != nil {
		return nil, err
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	return &Server{cfg: cfg, hostKey: key, limiter: newFailureLimiter(failureBurst, failureRefill),
		handshakes: make(chan struct{}, maxHandshakes), log: log.With("component", "ssh")}, nil
}

// PublicKey is the gateway's host key (for known_hosts).
func (s *Server) PublicKey() ssh.PublicKey { return s.hostKey.PublicKey() }

// loadHostKey reads the ed25519 host key at path, generating it the first
// time. It is written 0600 and never replaced, so clients keep trusting it.
func loadHostKey(path string) (ssh.Signer, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		block, err := ssh.MarshalPrivateKey(priv, "sbx ssh host key")
		if err != nil {
			return nil, err
		}
		b = pem.EncodeToMemory(block)
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, b, 0o600); err != nil {
			return nil, fmt.Errorf("write SSH host key: %w", err)
		}
		if err := os.Rename(tmp, path); err != nil {
			return nil, fmt.Errorf("write SSH host key: %w", err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("read SSH host key: %w", err)
	}
	signer, err := ssh.ParsePrivateKey(b)
	if err != nil {
		return nil, fmt.Errorf("SSH host key %s: %w", path, err)
	}
	return signer, nil
}

// Serve accepts connections on ln until ctx is done, then closes ln and
// every connection.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	for {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				s.wg.Wait()
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return err
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(ctx, nc)
		}()
	}
}

// serveConn authenticates one client and serves its channels.
func (s *Server) serveConn(ctx context.Context, nc net.Conn) {
	defer nc.Close()
	ip := hostOf(nc.RemoteAddr())
	if !s.limiter.Allowed(ip) {
		return // shut out for failing too often: no key exchange
	}
	select {
	case s.handshakes <- struct{}{}:
	default:
		return // too many handshakes at once
	}
	var failed bool
	nc.SetDeadline(time.Now().Add(handshakeTimeout))
	conn, chans, reqs, err := ssh.NewServerConn(nc, s.serverConfig(ctx, &failed))
	<-s.handshakes
	if err != nil {
		if failed { // a wrong token or key, not a dropped connection
			s.limiter.Failed(ip)
		}
		return
	}
	nc.SetDeadline(time.Time{})
	defer conn.Close()
	g := grantFrom(conn.Permissions)
	go ssh.DiscardRequests(reqs)

	cctx, cancel := context.WithCancel(auth.WithPrincipal(ctx, g.Principal))
	defer cancel()
	go func() { // the daemon stopping ends the connection
		<-cctx.Done()
		conn.Close()
	}()
	c := &client{gw: s, grant: g, ctx: cctx, conn: conn}
	// A connection starts the sandbox and keeps it active: it takes the
	// gate's steps first (connectOp); each channel then takes its own.
	_, startErr := s.cfg.Gate.Admit(cctx, g.Principal, connectOp.At("SSH", "/ssh/"+g.SandboxID))
	if startErr == nil {
		_, _, startErr = s.cfg.Sandboxes.Agent(cctx, g.SandboxID) // lazy start or resume
	}
	c.startErr = startErr
	if startErr == nil {
		release := s.cfg.Sandboxes.Hold(cctx, g.SandboxID)
		defer release()
		go c.closeWhenGone()
	}
	s.log.Info("ssh connection", "sandbox", g.SandboxID, "access", g.AccessID, "remote", nc.RemoteAddr().String(), "err", startErr)
	var wg sync.WaitGroup
	for nch := range chans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.serveChannel(nch)
		}()
	}
	cancel()
	wg.Wait()
}

// serverConfig is the SSH configuration of one connection; failed is set
// when a login attempt fails.
func (s *Server) serverConfig(ctx context.Context, failed *bool) *ssh.ServerConfig {
	check := func(g Grant, err error) (*ssh.Permissions, error) {
		if err != nil {
			*failed = true
			return nil, err
		}
		return permissionsOf(g), nil
	}
	cfg := &ssh.ServerConfig{
		MaxAuthTries:  maxAuthTries,
		ServerVersion: "SSH-2.0-sbx",
		NoClientAuth:  true,
		// The token is the user name (ssh TOKEN@host): the "none" method
		// every client tries first is enough.
		NoClientAuthCallback: func(m ssh.ConnMetadata) (*ssh.Permissions, error) {
			return check(s.cfg.Access.CheckToken(ctx, m.User()))
		},
		// Clients that insist on a password may send the token as one.
		PasswordCallback: func(m ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			return check(s.cfg.Access.CheckToken(ctx, string(pw)))
		},
		// A public key registered on the sandbox logs in as its id (ids
		// are global; names are only unique within a team).
		PublicKeyCallback: func(m ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			return check(s.cfg.Access.CheckKey(ctx, m.User(), key))
		},
	}
	cfg.AddHostKey(s.hostKey)
	return cfg
}

// client is one authenticated connection.
type client struct {
	gw    *Server
	grant Grant
	ctx   context.Context // carries the grant's principal
	conn  *ssh.ServerConn

	startErr error // why the sandbox could not be started at connect
}

// agent returns the sandbox's agent, starting it again if it stopped.
func (c *client) agent() (*agentapi.Client, error) {
	a, _, err := c.gw.cfg.Sandboxes.Agent(c.ctx, c.grant.SandboxID)
	return a, err
}

// closeWhenGone closes the connection once the sandbox leaves the started
// state (stopped, paused, deleted) or the access is revoked or expires.
func (c *client) closeWhenGone() {
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	for {
		changed := c.gw.cfg.Sandboxes.EventsChanged()
		revoked := c.gw.cfg.Access.Changed()
		sb, err := c.gw.cfg.Sandboxes.Get(c.ctx, c.grant.SandboxID)
		if c.ctx.Err() != nil {
			return
		}
		if err != nil || sb.State != wire.StateStarted || !c.gw.cfg.Access.Still(c.ctx, c.grant) {
			c.gw.log.Info("closing ssh connection", "sandbox", c.grant.SandboxID, "access", c.grant.AccessID)
			c.conn.Close()
			return
		}
		select {
		case <-c.ctx.Done():
			return
		case <-changed:
		case <-revoked:
		case <-tick.C:
		}
	}
}

// What a connection and each channel type need (internal/authz): a
// connection wakes the sandbox and keeps it active; a session runs a
// shell, a command or sftp; direct-tcpip reaches a port inside the
// sandbox, as a preview does. A channel type missing here is rejected.
var (
	connectOp  = authz.Op{Scope: auth.ScopeExec}
	channelOps = map[string]authz.Op{
		"session":      authz.Exec,
		"direct-tcpip": authz.Exec,
	}
)

// sshPath names an SSH channel in the audit log.
func sshPath(g Grant, channel string) string { return "/ssh/" + g.SandboxID + "/" + channel }

// serveChannel serves one channel the client opens, through the gate.
func (c *client) serveChannel(nch ssh.NewChannel) {
	need, ok := channelOps[nch.ChannelType()]
	if !ok {
		nch.Reject(ssh.UnknownChannelType, "unsupported channel type "+nch.ChannelType())
		return
	}
	done, err := c.gw.cfg.Gate.Admit(c.ctx, c.grant.Principal, need.At("SSH", sshPath(c.grant, nch.ChannelType())))
	if err != nil {
		nch.Reject(ssh.Prohibited, string(errdefs.CodeOf(err))+": "+err.Error())
		return
	}
	defer done(nil)
	if c.startErr != nil {
		nch.Reject(ssh.ConnectionFailed, "sandbox unavailable: "+c.startErr.Error())
		return
	}
	switch nch.ChannelType() {
	case "session":
		c.serveSession(nch) // session.go
	case "direct-tcpip":
		c.serveForward(nch) // forward.go
	}
}

// The grant travels from the auth callbacks to the connection in the
// permissions' extensions.
func permissionsOf(g Grant) *ssh.Permissions {
	scopes := make([]string, len(g.Principal.Scopes))
	for i, s := range g.Principal.Scopes {
		scopes[i] = string(s)
	}
	return &ssh.Permissions{Extensions: map[string]string{
		"access": g.AccessID, "sandbox": g.SandboxID, "team": g.Principal.Team, "key": g.Principal.KeyID,
		"scopes": strings.Join(scopes, ","),
	}}
}

func grantFrom(p *ssh.Permissions) Grant {
	e := p.Extensions
	g := Grant{AccessID: e["access"], SandboxID: e["sandbox"], Principal: auth.Principal{Team: e["team"], KeyID: e["key"]}}
	if e["scopes"] != "" {
		for _, s := range strings.Split(e["scopes"], ",") {
			g.Principal.Scopes = append(g.Principal.Scopes, auth.Scope(s))
		}
	}
	return g
}

func hostOf(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	h, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return h
}
