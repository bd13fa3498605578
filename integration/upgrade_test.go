package integration

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// Upgrades in place (issue 16 item 7): a new sbx binary takes over the
// sandboxes of the previous release on the same data dir (its database,
// its instances, its agents, its memory images).

// previousRelease is the commit of the release before this one (main when
// the upgrade work began); SBX_UPGRADE_FROM names another commit.
const previousRelease = "bfedae55876a48ddf877abaf6aca383a1905d44b"

// buildRelease builds the sbx binary of commit ref (git archive of this
// repository, no work tree touched).
func buildRelease(t *testing.T, ref string) string {
	t.Helper()
	src := t.TempDir()
	archive := exec.Command("git", "archive", "--format=tar", ref)
	archive.Dir = ".."
	out, err := archive.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	archive.Stderr = &stderr
	if err := archive.Start(); err != nil {
		t.Fatalf("git archive %s: %v (the upgrade test needs git and this repository's history)", ref, err)
	}
	if err := untar(out, src); err != nil {
		t.Fatal(err)
	}
	if err := archive.Wait(); err != nil {
		t.Fatalf("git archive %s: %v: %s (the upgrade test needs this repository's history: not a shallow clone)", ref, err, stderr.String())
	}
	bin := filepath.Join(t.TempDir(), "sbx-"+ref[:8])
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/sbx")
	build.Dir = src
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build sbx at %s: %v\n%s", ref, err, b)
	}
	return bin
}

// untar extracts the regular files and directories of a git archive.
func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		path := filepath.Join(dir, filepath.FromSlash(h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, 0o755)
		case tar.TypeReg:
			var f *os.File
			if f, err = os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o777); err == nil {
				_, err = io.Copy(f, tr)
				f.Close()
			}
		case tar.TypeSymlink:
			err = os.Symlink(h.Linkname, path)
		}
		if err != nil {
			return err
		}
	}
}

// startDaemonWith is startDaemon running the sbx binary bin.
func startDaemonWith(t *testing.T, bin string, args ...string) *daemon {
	t.Helper()
	d := &daemon{t: t, dataDir: t.TempDir(), addr: freeAddr(t), created: map[string]bool{}, bin: bin}
	d.args = netArgs(t, args)
	t.Cleanup(d.cleanup)
	d.start()
	return d
}

// agentBinaries lists the agent binaries kept in the data dir.
func (d *daemon) agentBinaries() []string {
	entries, _ := os.ReadDir(filepath.Join(d.dataDir, "agent"))
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// counter reads the in-memory counter the "counter" process writes out: 0
// before its first write (the first poll can come before it).
func (d *daemon) counter(sb string) int {
	n, _ := strconv.Atoi(d.exec(sb, "cat /workspace/count 2>/dev/null || true"))
	return n
}

func TestUpgradeInPlace(t *testing.T) {
	if _, err := exec.LookPath("runsc"); err != nil {
		t.Skip("needs runsc (apt-get install runsc)")
	}
	from := previousRelease
	if ref := os.Getenv("SBX_UPGRADE_FROM"); ref != "" {
		from = ref
	}
	d := startDaemonWith(t, buildRelease(t, from))
	ctx := context.Background()

	// With the previous release: running, stopped, archived, and a paused
	// gvisor sandbox whose shell counts in memory.
	for _, name := range []string{"running", "stopped", "archived"} {
		d.create(sdk.CreateSandboxRequest{Name: name})
		d.exec(name, "echo "+name+" > /workspace/kept")
	}
	if _, err := d.client.StopSandbox(ctx, "stopped", sdk.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.client.StopSandbox(ctx, "archived", sdk.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.client.ArchiveSandbox(ctx, "archived"); err != nil {
		t.Fatal(err)
	}
	d.waitState("archived", sdk.StateArchived, 60*time.Second)
	d.create(sdk.CreateSandboxRequest{Name: "paused", Class: "gvisor"})
	if _, err := d.client.StartProcess(ctx, "paused", sdk.StartProcessRequest{ID: "counter", Cmd: []string{"sh", "-c",
		"i=0; while :; do i=$((i+1)); echo $i > /workspace/count.tmp; mv /workspace/count.tmp /workspace/count; sleep 0.05; done"}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "the counter to pass 40", func() bool { return d.counter("paused") > 40 })
	saved := d.counter("paused")
	if _, err := d.client.PauseSandbox(ctx, "paused"); err != nil {
		t.Fatal(err)
	}
	before := d.agentBinaries()

	// The new binary on the same data dir.
	d.stop()
	d.bin = ""
	d.start()
	agents := d.agentBinaries()
	if len(before) != 1 || len(agents) != 2 || !strings.Contains(strings.Join(agents, " "), before[0]) {
		t.Errorf("agent binaries %v after the upgrade (before %v): want the old one kept beside the new", agents, before)
	}
	for name, state := range map[string]sdk.State{"running": sdk.StateStarted, "stopped": sdk.StateStopped, "archived": sdk.StateArchived, "paused": sdk.StatePaused} {
		if sb, err := d.client.GetSandbox(ctx, name); err != nil || sb.State != state {
			t.Errorf("%s after the upgrade: %+v, %v; want %s", name, sb, err, state)
		}
	}
	// The running one keeps its old agent, which the new daemon talks to.
	if got := d.exec("running", "cat /workspace/kept"); got != "running" {
		t.Errorf("running: %q", got)
	}
	for _, name := range []string{"stopped", "archived"} {
		if _, err := d.client.StartSandbox(ctx, name); err != nil {
			t.Fatalf("start %s after the upgrade: %v", name, err)
		}
		if got := d.exec(name, "cat /workspace/kept"); got != name {
			t.Errorf("%s: %q", name, got)
		}
	}
	// The paused one resumes with its memory: the same shell counts on.
	if _, err := d.client.ResumeSandbox(ctx, "paused"); err != nil {
		t.Fatalf("resume after the upgrade: %v", err)
	}
	if n := d.counter("paused"); n < saved {
		t.Errorf("counter %d after resume, want it to go on from %d", n, saved)
	}
	resumed := d.counter("paused")
	waitFor(t, 30*time.Second, "the counter to count on", func() bool { return d.counter("paused") > resumed })
	if p, err := d.client.GetProcess(ctx, "paused", "counter"); err != nil || p.State != "running" {
		t.Errorf("counter process after resume: %+v, %v", p, err)
	}

	// Once no instance runs the old agent, the next daemon start sweeps it.
	for _, name := range []string{"running", "paused"} {
		if _, err := d.client.StopSandbox(ctx, name, sdk.StopOptions{Force: true}); err != nil {
			t.Fatal(err)
		}
	}
	d.stop()
	d.start()
	if agents := d.agentBinaries(); len(agents) != 1 || agents[0] == before[0] {
		t.Errorf("agent binaries %v after the old agent's last instance stopped, want only the new one", agents)
	}
	if got := d.exec("running", "cat /workspace/kept"); got != "running" {
		t.Errorf("running, started with the new agent: %q", got)
	}
}

// An instance whose agent speaks a protocol the daemon does not is
// restarted with the current agent, with an event that says why. The
// stand-in is a build that says version 99, as an agent of a newer sbx
// would after a downgrade (version 0 cannot be told from an agent of the
// release before versions, which is version 1).
func TestUpgradeRestartsAnAgentItCannotTalkTo(t *testing.T) {
	ancient := filepath.Join(t.TempDir(), "sbx-protocol-99")
	build := exec.Command("go", "build", "-ldflags", "-X github.com/sbxhq/sbx/internal/agentapi.protocol=99", "-o", ancient, "github.com/sbxhq/sbx/cmd/sbx")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, b)
	}
	d := startDaemonWith(t, ancient)
	ctx := context.Background()
	d.create(sdk.CreateSandboxRequest{Name: "old"})
	d.exec("old", "echo kept > /workspace/kept")
	if _, err := d.client.StartProcess(ctx, "old", sdk.StartProcessRequest{ID: "sleeper", Cmd: []string{"sleep", "600"}}); err != nil {
		t.Fatal(err)
	}
	d.stop()
	d.bin = ""
	d.start()
	sb, err := d.client.GetSandbox(ctx, "old")
	if err != nil || sb.State != sdk.StateStarted || sb.Reason != "agent-upgrade" {
		t.Fatalf("after the upgrade: %+v, %v; want started, reason agent-upgrade", sb, err)
	}
	evs, err := d.client.ListEvents(ctx, "old", sdk.EventOptions{})
	if err != nil {
		t.Fatal(err)
	}
	explained := false
	for _, e := range evs {
		explained = explained || e.State == sdk.StateStopped && e.Reason == "agent-upgrade" && strings.Contains(e.Message, "protocol version 99")
	}
	if !explained {
		t.Errorf("no stopped/agent-upgrade event naming protocol version 99: %+v", evs)
	}
	if got := d.exec("old", "cat /workspace/kept"); got != "kept" {
		t.Errorf("files after the restart: %q", got)
	}
	if procs, err := d.client.ListProcesses(ctx, "old"); err != nil || len(procs) != 0 {
		t.Errorf("processes after the restart: %+v, %v; want none (a new instance)", procs, err)
	}
}
