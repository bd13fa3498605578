package agentapi

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

func newRunDir(t *testing.T) string {
	// Not t.TempDir: unix socket paths must stay short.
	dir, err := os.MkdirTemp("", "sbx-agentapi-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

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
	planted := filepath.Join(runDir, AgentSock)
	if err := os.Symlink(hostSock, planted); err != nil {
		t.Fatal(err)
	}

	c := NewClient(runDir)
	defer c.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // a followed symlink would hang
	defer cancel()
	err = c.Health(ctx)
	if errdefs.CodeOf(err) != wire.CodeAgentSocketInvalid || !errdefs.Is(err, errdefs.KindUnavailable) || !strings.Contains(err.Error(), "symlink") {
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
	if err := c.Health(t.Context()); errdefs.CodeOf(err) != wire.CodeAgentUnavailable {
		t.Fatalf("missing socket: %v", err)
	}
	if err := os.WriteFile(filepath.Join(runDir, AgentSock), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := c.Health(t.Context()); errdefs.CodeOf(err) != wire.CodeAgentSocketInvalid {
		t.Fatalf("regular file: %v", err)
	}
}
