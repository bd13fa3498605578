package agent

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
)

// dialSocket connects as the daemon's client does (files_test.go).
func dialSocket(ctx context.Context, path string) (net.Conn, error) { return agentapi.Dial(ctx, path) }

func TestClientWaitReady(t *testing.T) {
	t.Parallel()
	runDir := newRunDir(t)
	sock := filepath.Join(runDir, agentapi.AgentSock)
	// A stale file where the socket goes: the agent replaces it.
	if err := os.WriteFile(sock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c := agentapi.NewClient(runDir)
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
