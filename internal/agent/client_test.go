package agent

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/runtime"
)

// Code in a sandbox can plant a symlink to a host socket where the agent
// socket was; the client must not connect through it.
func TestClientRefusesSymlinkedSocket(t *testing.T) {
	t.Parallel()
	hostDir := newRunDir(t)
	hostSock := filepath.Join(hostDir, "host.sock")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: hostSock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	runDir := newRunDir(t)
	planted := filepath.Join(runDir, runtime.AgentSock)
	if err := os.Symlink(hostSock, planted); err != nil {
		t.Fatal(err)
	}

	c := NewClient(runDir)
	defer c.Close()
	ctx, cancel := context.WithTimeout(t.Context(), waitFor) // a followed symlink would hang
	defer cancel()
	err = c.Health(ctx)
	if errdefs.CodeOf(err) != "AGENT_SOCKET_INVALID" || !errdefs.Is(err, errdefs.KindUnavailable) || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("Health through a symlink: %v", err)
	}
	// Connections complete into the backlog synchronously, so an attempt
	// would be waiting now.
	if pending(t, l) {
		t.Fatal("the host socket received a connection")
	}

	// The test can fail: a plain connect does follow the symlink.
	conn, err := net.Dial("unix", planted)
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if !pending(t, l) {
		t.Fatal("control: a plain dial through the symlink did not reach the host socket")
	}
}

// pending reports whether a connection waits in l's backlog, without
// waiting: one accept4 on the (non-blocking) listening fd.
func pending(t *testing.T, l *net.UnixListener) bool {
	t.Helper()
	rc, err := l.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var nfd int
	var aerr error
	if err := rc.Control(func(fd uintptr) {
		nfd, _, aerr = unix.Accept4(int(fd), unix.SOCK_CLOEXEC)
	}); err != nil {
		t.Fatal(err)
	}
	if errors.Is(aerr, unix.EAGAIN) {
		return false
	}
	if aerr != nil {
		t.Fatal(aerr)
	}
	unix.Close(nfd)
	return true
}

func TestClientRefusesNonSocket(t *testing.T) {
	t.Parallel()
	runDir := newRunDir(t)
	c := NewClient(runDir)
	defer c.Close()
	if err := c.Health(t.Context()); errdefs.CodeOf(err) != "AGENT_UNAVAILABLE" {
		t.Fatalf("missing socket: %v", err)
	}
	if err := os.WriteFile(filepath.Join(runDir, runtime.AgentSock), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := c.Health(t.Context()); errdefs.CodeOf(err) != "AGENT_SOCKET_INVALID" {
		t.Fatalf("regular file: %v", err)
	}
}

func TestClientWaitReady(t *testing.T) {
	t.Parallel()
	runDir := newRunDir(t)
	sock := filepath.Join(runDir, runtime.AgentSock)
	// A stale file where the socket goes: the agent replaces it.
	if err := os.WriteFile(sock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c := NewClient(runDir)
	defer c.Close()

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.WaitReady(ctx); !errdefs.Is(err, errdefs.KindUnavailable) {
		t.Fatalf("WaitReady with no agent: %v", err)
	}

	ready := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		ready <- c.WaitReady(ctx)
	}()
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(runCtx, Config{Socket: sock, DefaultCwd: t.TempDir()}) }()
	if err := <-ready; err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(sock)
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %v: %v", fi.Mode(), err)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket left after Run: %v", err)
	}
	if entries, _ := os.ReadDir(runDir); len(entries) != 0 {
		t.Fatalf("run dir not empty: %v", entries)
	}
}

func TestHealth(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	var h struct {
		OK  bool `json:"ok"`
		Pid int  `json:"pid"`
	}
	a.call("GET", "/healthz", nil, 200, &h)
	if !h.OK || h.Pid != os.Getpid() {
		t.Fatalf("healthz: %+v", h)
	}
}
