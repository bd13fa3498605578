package integration

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// TestSnapshotNamesPerTeam: two teams each save a snapshot called "same"
// from their own sandbox; each starts a sandbox from its own and reads its
// own file; one team's delete, and the expiry of one team's snapshot, leave
// the other's of the same name intact. No answer names the other team.
func TestSnapshotNamesPerTeam(t *testing.T) {
	d := startDaemon(t, "--rate-limit", "0")
	ctx := context.Background()
	clients := map[string]*sdk.Client{}
	for _, team := range []string{"team-a", "team-b"} {
		c, _ := d.teamKey(team, sdk.Quotas{}, allScopes...)
		clients[team] = c
		if _, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "src"}); err != nil {
			t.Fatal(err)
		}
		teamExec(t, c, "src", "echo "+team+" > /workspace/who")
	}
	a, b := clients["team-a"], clients["team-b"]
	for team, c := range clients {
		if _, err := c.CreateSnapshot(ctx, "src", sdk.CreateSnapshotRequest{Name: "same"}); err != nil {
			t.Fatalf("%s's snapshot same: %v", team, err)
		}
	}
	// A's "short" expires; B's of that name does not.
	if _, err := a.CreateSnapshot(ctx, "src", sdk.CreateSnapshotRequest{Name: "short", ExpiresInSeconds: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.CreateSnapshot(ctx, "src", sdk.CreateSnapshotRequest{Name: "short"}); err != nil {
		t.Fatalf("b's snapshot short: %v", err)
	}
	for team, c := range clients {
		if list, err := c.ListSnapshots(ctx); err != nil || len(list) != 2 {
			t.Errorf("%s lists %v, %v; want its own two", team, list, err)
		}
		if _, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "copy", Snapshot: "same"}); err != nil {
			t.Fatalf("%s's sandbox from same: %v", team, err)
		}
		if got := teamExec(t, c, "copy", "cat /workspace/who"); got != team {
			t.Errorf("%s's sandbox from its snapshot same reads %q", team, got)
		}
	}

	if err := a.DeleteSnapshot(ctx, "same"); err != nil {
		t.Fatal(err)
	}
	_, err := a.GetSnapshot(ctx, "same")
	if apiCode(err) != "SNAPSHOT_NOT_FOUND" || strings.Contains(err.Error(), "team-b") {
		t.Errorf("a's deleted snapshot: %v", err)
	}
	if got, err := b.GetSnapshot(ctx, "same"); err != nil || got.Name != "same" {
		t.Fatalf("b's snapshot after a deleted its own: %+v, %v", got, err)
	}
	if _, err := b.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "again", Snapshot: "same"}); err != nil {
		t.Fatalf("b's sandbox from same after a's delete: %v", err)
	}
	if got := teamExec(t, b, "again", "cat /workspace/who"); got != "team-b" {
		t.Errorf("b's sandbox from same after a's delete reads %q", got)
	}

	waitFor(t, 30*time.Second, "a's snapshot short to expire", func() bool {
		_, err := a.GetSnapshot(ctx, "short")
		return apiCode(err) == "SNAPSHOT_NOT_FOUND"
	})
	if _, err := b.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "later", Snapshot: "short"}); err != nil {
		t.Fatalf("b's sandbox from short after a's expired: %v", err)
	}
	if got := teamExec(t, b, "later", "cat /workspace/who"); got != "team-b" {
		t.Errorf("b's sandbox from short reads %q", got)
	}
}

// teamExec runs shell in sandbox sb with c and returns its trimmed output.
func teamExec(t *testing.T, c *sdk.Client, sb, shell string) string {
	t.Helper()
	res, err := c.Exec(context.Background(), sb, sdk.ExecRequest{Shell: shell, TimeoutSeconds: 60})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exec %q in %s: %v %+v", shell, sb, err, res)
	}
	return strings.TrimSpace(res.Stdout)
}

// TestMemorySnapshotNamesPerTeam: two teams each save a gVisor snapshot
// with memory called "warm"; each sandbox made from one runs the processes
// of its own team's, restored from that snapshot's memory image.
func TestMemorySnapshotNamesPerTeam(t *testing.T) {
	d := gvisorDaemon(t, "--rate-limit", "0")
	ctx := context.Background()
	teams := []string{"team-a", "team-b"}
	clients := make([]*sdk.Client, len(teams))
	for i, team := range teams {
		c, _ := d.teamKey(team, sdk.Quotas{}, allScopes...)
		clients[i] = c
		if _, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "src", Class: "gvisor", Network: "none"}); err != nil {
			t.Fatal(err)
		}
		// A process only the memory image holds: its argument names the team.
		teamExec(t, c, "src", fmt.Sprintf("(sleep %d > /dev/null 2>&1 &)", 7000+i))
		if _, err := c.CreateSnapshot(ctx, "src", sdk.CreateSnapshotRequest{Name: "warm", IncludeMemory: true}); err != nil {
			t.Fatalf("%s's memory snapshot warm: %v", team, err)
		}
	}
	for i, c := range clients {
		if _, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "copy", Snapshot: "warm"}); err != nil {
			t.Fatalf("%s's sandbox from warm: %v", teams[i], err)
		}
		want := fmt.Sprintf("sleep %d", 7000+i)
		if got := teamExec(t, c, "copy", "ps -o args | grep '^sleep 7' || true"); got != want {
			t.Errorf("%s's sandbox from its warm runs %q, want %q", teams[i], got, want)
		}
	}
}

// TestMemorySnapshotFromBeforeUpgrade: a memory snapshot whose files are
// kept by its name, as before names were per team (its row's storage key
// is its name, migration 12), survives a daemon start (whose sweep removes
// snapshot files of no snapshot) and restores its processes; deleting it
// removes its files.
func TestMemorySnapshotFromBeforeUpgrade(t *testing.T) {
	d := gvisorDaemon(t)
	ctx := context.Background()
	d.create(sdk.CreateSandboxRequest{Name: "src", Class: "gvisor", Network: "none"})
	d.exec("src", "(sleep 7777 > /dev/null 2>&1 &)")
	if _, err := d.client.CreateSnapshot(ctx, "src", sdk.CreateSnapshotRequest{Name: "warm", IncludeMemory: true}); err != nil {
		t.Fatal(err)
	}
	d.stop()
	db, err := sql.Open("sqlite", filepath.Join(d.dataDir, "sbx.db"))
	if err != nil {
		t.Fatal(err)
	}
	var key string
	if err := db.QueryRow("SELECT storage_key FROM snapshots WHERE name = 'warm'").Scan(&key); err != nil || key == "warm" {
		t.Fatalf("storage key of a new snapshot: %q, %v", key, err)
	}
	old := filepath.Join(d.dataDir, "snapshots", "warm")
	if err := os.Rename(filepath.Join(d.dataDir, "snapshots", key), old); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("UPDATE snapshots SET storage_key = 'warm' WHERE name = 'warm'"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	d.start()
	d.create(sdk.CreateSandboxRequest{Name: "copy", Snapshot: "warm"})
	if got := d.exec("copy", "ps -o args | grep '^sleep 7' || true"); got != "sleep 7777" {
		t.Errorf("sandbox from the old memory snapshot runs %q", got)
	}
	if err := d.client.DeleteSnapshot(ctx, "warm"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("the old snapshot's files outlive it: %v", err)
	}
}
