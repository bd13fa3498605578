package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// TestSuspendAndWake closes the agent's socket and connections and opens
// them again, by the wake file and by SIGUSR1.
func TestSuspendAndWake(t *testing.T) {
	// The test runs on the host, whose sockets are not the agent's business.
	empty := filepath.Join(t.TempDir(), "unix")
	os.WriteFile(empty, []byte("Num RefCount Protocol Flags Type St Inode Path\n"), 0o600)
	procNetUnix = empty
	t.Cleanup(func() { procNetUnix = "/proc/net/unix" })

	a := startAgent(t)
	ctx := context.Background()
	sock := filepath.Join(a.runDir, agentapi.AgentSock)
	for round, wake := range []func(){
		func() { agentapi.Wake(a.runDir) },
		func() { syscall.Kill(os.Getpid(), syscall.SIGUSR1) },
	} {
		if err := a.client.Health(ctx); err != nil { // an idle connection to close
			t.Fatal(err)
		}
		if err := a.client.Suspend(ctx); err != nil {
			t.Fatalf("round %d: suspend: %v", round, err)
		}
		if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("round %d: socket still there: %v", round, err)
		}
		if err := a.client.Health(ctx); !errdefs.Is(err, errdefs.KindUnavailable) {
			t.Fatalf("round %d: health while suspended: %v", round, err)
		}
		wake()
		poll(t, "the agent to listen again", func() bool { return a.client.Health(ctx) == nil })
		if _, err := os.Lstat(filepath.Join(a.runDir, agentapi.WakeFile)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("round %d: wake file left: %v", round, err)
		}
	}
	// Exec works after all that.
	if res := a.exec(wire.ExecRequest{Shell: "echo back"}); strings.TrimSpace(res.Stdout) != "back" {
		t.Errorf("exec after resume: %+v", res)
	}
}

func TestSuspendRefusedForDiskSocket(t *testing.T) {
	table := "Num RefCount Protocol Flags Type St Inode Path\n" +
		"0000000000000000: 00000002 00000000 00010000 0001 01 10 /.sbx/run/.sock-1-2\n" +
		"0000000000000000: 00000002 00000000 00010000 0001 01 11 @abstract\n" +
		"0000000000000000: 00000002 00000000 00010000 0001 01 12 /tmp/fine.sock\n" +
		"0000000000000000: 00000003 00000000 00000000 0001 03 13\n"
	mounts := []mount{{"/", "9p"}, {"/tmp", "tmpfs"}, {"/.sbx/run", "9p"}}
	if got := boundOnDisk(strings.NewReader(table), mounts, "/.sbx/run"); got != "" {
		t.Errorf("refused with only allowed sockets: %s", got)
	}
	bad := table + "0000000000000000: 00000002 00000000 00010000 0001 01 14 /workspace/app.sock\n"
	if got := boundOnDisk(strings.NewReader(bad), mounts, "/.sbx/run"); !strings.Contains(got, "/workspace/app.sock") {
		t.Errorf("a socket on disk was not refused: %q", got)
	}
	rel := table + "0000000000000000: 00000002 00000000 00010000 0001 01 15 rel.sock\n"
	if got := boundOnDisk(strings.NewReader(rel), mounts, "/.sbx/run"); got == "" {
		t.Error("a relative socket path was not refused")
	}
	if fsType(mounts, "/tmpx/a") != "9p" || fsType(mounts, "/tmp/a") != "tmpfs" {
		t.Error("fsType matched a mount point by string prefix")
	}
}
