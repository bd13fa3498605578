package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// A sandbox mounts the volume it was created with, never another one of
// the same name: team B's sandbox mounts B's "data", B force-deletes it,
// team A makes its own "data" and writes in it; B's sandbox then fails to
// start, naming its own (deleted) volume, and never sees A's files. Both
// teams hold a "data" at once, each its own.
func TestVolumeBoundAcrossTeams(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	a, _ := d.teamKey("team-a", sdk.Quotas{}, allScopes...)
	b, _ := d.teamKey("team-b", sdk.Quotas{}, allScopes...)

	if _, err := b.CreateVolume(ctx, sdk.CreateVolumeRequest{Name: "data", SizeMiB: 16}); err != nil {
		t.Fatal(err)
	}
	sbB, err := b.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "reader", Volumes: []sdk.VolumeMount{{Name: "data", Path: "/data"}}})
	if err != nil {
		t.Fatal(err)
	}
	d.created[sbB.ID] = true
	if _, err := b.StopSandbox(ctx, "reader", sdk.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteVolume(ctx, "data", true); err != nil {
		t.Fatal(err)
	}

	// Team A's own "data", with a file in it.
	if _, err := a.CreateVolume(ctx, sdk.CreateVolumeRequest{Name: "data", SizeMiB: 16}); err != nil {
		t.Fatalf("team a's data after team b's is gone: %v", err)
	}
	sbA, err := a.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "writer", Volumes: []sdk.VolumeMount{{Name: "data", Path: "/data"}}})
	if err != nil {
		t.Fatal(err)
	}
	d.created[sbA.ID] = true
	if res, err := a.Exec(ctx, "writer", sdk.ExecRequest{Shell: "echo secret-of-a > /data/a.txt"}); err != nil || res.ExitCode != 0 {
		t.Fatalf("write in team a's volume: %+v, %v", res, err)
	}

	_, err = b.StartSandbox(ctx, "reader")
	if err == nil {
		res, _ := b.Exec(ctx, "reader", sdk.ExecRequest{Shell: "cat /data/a.txt"})
		t.Fatalf("team b's sandbox started after its volume was deleted; it reads %+v", res)
	}
	if errCode(err) != sdk.CodeVolumeNotFound || !strings.Contains(err.Error(), `volume "data"`) || !strings.Contains(err.Error(), "reader") {
		t.Errorf("start after the volume was deleted: %v, want VOLUME_NOT_FOUND naming the sandbox and its volume", err)
	}

	// Team B makes "data" again while A holds one: its own, empty; the old
	// sandbox stays bound to the deleted one, a new one mounts the new.
	if _, err := b.CreateVolume(ctx, sdk.CreateVolumeRequest{Name: "data", SizeMiB: 16}); err != nil {
		t.Fatalf("team b's data while team a has one: %v", err)
	}
	if _, err := b.StartSandbox(ctx, "reader"); errCode(err) != sdk.CodeVolumeNotFound {
		t.Errorf("start once a new data exists: %v, want VOLUME_NOT_FOUND", err)
	}
	sbB2, err := b.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "reader2", Volumes: []sdk.VolumeMount{{Name: "data", Path: "/data"}}})
	if err != nil {
		t.Fatal(err)
	}
	d.created[sbB2.ID] = true
	if res, err := b.Exec(ctx, "reader2", sdk.ExecRequest{Shell: "ls -A /data | grep -v lost+found; true"}); err != nil || res.Stdout != "" {
		t.Errorf("team b's new data holds: %+v, %v", res, err)
	}
	for _, c := range []struct {
		name   string
		client *sdk.Client
		user   string
	}{{"team a", a, sbA.ID}, {"team b", b, sbB2.ID}} {
		list, err := c.client.ListVolumes(ctx)
		if err != nil || len(list) != 1 || list[0].Name != "data" || !strings.Contains(strings.Join(list[0].UsedBy, ","), c.user) {
			t.Errorf("%s's volumes: %+v, %v", c.name, list, err)
		}
		if len(list) == 1 && strings.Contains(strings.Join(list[0].UsedBy, ","), map[string]string{sbA.ID: sbB2.ID, sbB2.ID: sbA.ID}[c.user]) {
			t.Errorf("%s's volume lists the other team's sandbox: %+v", c.name, list[0].UsedBy)
		}
	}
	// B's delete of its data removes B's only.
	for _, name := range []string{"reader", "reader2"} {
		if err := b.DeleteSandbox(ctx, name, true); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.DeleteVolume(ctx, "data", false); err != nil {
		t.Fatal(err)
	}
	if res, err := a.Exec(ctx, "writer", sdk.ExecRequest{Shell: "cat /data/a.txt"}); err != nil || res.Stdout != "secret-of-a\n" {
		t.Errorf("team a's volume after team b deleted its own: %+v, %v", res, err)
	}
	d.dropVolumes(a, b)
}

// dropVolumes deletes every sandbox and volume the clients' teams hold and
// waits for the volumes' loop devices to detach (the leak check's).
func (d *daemon) dropVolumes(clients ...*sdk.Client) {
	d.t.Helper()
	ctx := context.Background()
	for _, c := range clients {
		sbs, err := c.ListSandboxes(ctx, sdk.ListOptions{})
		if err != nil {
			d.t.Fatal(err)
		}
		for _, sb := range sbs {
			if err := c.DeleteSandbox(ctx, sb.ID, true); err != nil {
				d.t.Fatal(err)
			}
		}
		vols, err := c.ListVolumes(ctx)
		if err != nil {
			d.t.Fatal(err)
		}
		for _, v := range vols {
			if err := c.DeleteVolume(ctx, v.Name, false); err != nil {
				d.t.Fatal(err)
			}
		}
	}
	waitFor(d.t, 10*time.Second, "the volumes' loop devices to detach", func() bool { return len(loopDevicesUnder(d.dataDir)) == 0 })
}

// Under a disk quota every byte a team can make counts: a sandbox without
// diskMiB (the host's disk, unbounded, under the harness's
// --default-disk-mib 0) is refused, volumes count their size and backups
// their stored bytes, and the usage shows them.
func TestDiskQuotaCountsVolumesAndBackups(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	c, _ := d.teamKey("small", sdk.Quotas{DiskMiB: 100}, allScopes...)

	_, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "unbounded"})
	if errCode(err) != sdk.CodeQuotaDisk || !strings.Contains(err.Error(), "diskMiB") {
		t.Errorf("a sandbox without diskMiB under a disk quota: %v, want QUOTA_DISK naming diskMiB", err)
	}
	if _, err := c.CreateVolume(ctx, sdk.CreateVolumeRequest{Name: "huge", SizeMiB: 1 << 20}); errCode(err) != sdk.CodeQuotaDisk {
		t.Errorf("a 1 TiB volume under a 100 MiB quota: %v, want QUOTA_DISK", err)
	}
	if _, err := c.CreateVolume(ctx, sdk.CreateVolumeRequest{Name: "v1", SizeMiB: 40}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateVolume(ctx, sdk.CreateVolumeRequest{Name: "v2", SizeMiB: 40}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateVolume(ctx, sdk.CreateVolumeRequest{Name: "v3", SizeMiB: 40}); errCode(err) != sdk.CodeQuotaDisk {
		t.Errorf("a third 40 MiB volume under 100 MiB: %v, want QUOTA_DISK", err)
	}
	sb, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "bounded", DiskMiB: 16})
	if err != nil {
		t.Fatalf("80 MiB of volumes and a 16 MiB sandbox under 100 MiB: %v", err)
	}
	d.created[sb.ID] = true
	if u, err := c.TeamUsage(ctx, "small"); err != nil || u.DiskMiB != 96 {
		t.Errorf("usage: %+v, %v, want diskMiB 96", u, err)
	}
	// 4 MiB left: a backup of 6 MiB of random bytes is refused and leaves
	// nothing; a small one fits and counts.
	if res, err := c.Exec(ctx, "bounded", sdk.ExecRequest{Shell: "mkdir /big /small && head -c 6291456 /dev/urandom > /big/r && echo hi > /small/f"}); err != nil || res.ExitCode != 0 {
		t.Fatalf("fill: %+v, %v", res, err)
	}
	if _, err := c.CreateBackup(ctx, "bounded", sdk.CreateBackupRequest{Path: "/big"}); errCode(err) != sdk.CodeQuotaDisk {
		t.Errorf("a 6 MiB backup with 4 MiB left: %v, want QUOTA_DISK", err)
	}
	if list, err := c.ListBackups(ctx, ""); err != nil || len(list) != 0 {
		t.Errorf("backups after the refused one: %+v, %v", list, err)
	}
	if _, err := c.CreateBackup(ctx, "bounded", sdk.CreateBackupRequest{Path: "/small"}); err != nil {
		t.Fatalf("a small backup: %v", err)
	}
	if u, err := c.TeamUsage(ctx, "small"); err != nil || u.DiskMiB != 97 {
		t.Errorf("usage with a backup: %+v, %v, want diskMiB 97", u, err)
	}
	d.dropVolumes(c)
}

// Names are per team and say nothing of other teams: two teams build,
// import and make volumes under one name each on their own; a
// default-team key's build (whose images every team sees) never serves
// team B's build from its cache; and a default-team key's delete of its
// image that team A's sandbox uses answers "in use" without A's ids.
func TestImageNamesAndBuildCachePerTeam(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	def, _ := d.teamKey("default", sdk.Quotas{}, allScopes...)
	a, _ := d.teamKey("team-a", sdk.Quotas{}, allScopes...)
	b, _ := d.teamKey("team-b", sdk.Quotas{}, allScopes...)

	// The same build, by name "app", in team default then team B: B's step
	// runs again (not served from default's cache) and B's image is B's.
	req := sdk.BuildRequest{Name: "app", From: "base", Steps: []sdk.BuildStep{{Run: "head -c 16 /dev/urandom | od -An -tx1 > /stamp"}}}
	build := func(c *sdk.Client, team string) (cached bool) {
		t.Helper()
		img, err := c.BuildImageSteps(ctx, req, func(ev sdk.BuildEvent) { cached = cached || ev.Cached })
		if err != nil || img.Team != team {
			t.Fatalf("%s's build of app: %+v, %v", team, img, err)
		}
		return cached
	}
	build(def, "default")
	if build(b, "team-b") {
		t.Errorf("team b's build was served from team default's cache")
	}
	if !build(b, "team-b") {
		t.Errorf("team b's second build did not use its own cache")
	}
	stamp := func(c *sdk.Client, name string) string {
		t.Helper()
		sb, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: name, Image: "app"})
		if err != nil {
			t.Fatal(err)
		}
		d.created[sb.ID] = true
		res, err := c.Exec(ctx, name, sdk.ExecRequest{Shell: "cat /stamp"})
		if err != nil || res.ExitCode != 0 || res.Stdout == "" {
			t.Fatalf("%s: %+v, %v", name, res, err)
		}
		return res.Stdout
	}
	if sd, sb := stamp(def, "d-app"), stamp(b, "b-app"); sd == sb {
		t.Errorf("team b's app holds team default's layer: %q", sb)
	}

	// Team A uses default's app (no app of its own); default's delete is
	// refused without naming A's sandbox; B's delete of its own app is
	// B's business only.
	sbA, err := a.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "a-app", Image: "app"})
	if err != nil {
		t.Fatal(err)
	}
	d.created[sbA.ID] = true
	if err := def.DeleteSandbox(ctx, "d-app", true); err != nil {
		t.Fatal(err)
	}
	err = def.RemoveImage(ctx, "app")
	if errCode(err) != sdk.CodeImageInUse || strings.Contains(err.Error(), "sbx-") || strings.Contains(err.Error(), "a-app") {
		t.Errorf("default's delete of app that team a uses: %v, want IMAGE_IN_USE naming no sandbox", err)
	}
	if err := b.DeleteSandbox(ctx, "b-app", true); err != nil {
		t.Fatal(err)
	}
	if err := b.RemoveImage(ctx, "app"); err != nil {
		t.Errorf("team b's delete of its own app (team a uses default's): %v", err)
	}
	if err := b.RemoveImage(ctx, "app"); errCode(err) != sdk.CodeImageNotFound {
		t.Errorf("team b's delete of default's app: %v, want IMAGE_NOT_FOUND", err)
	}

	// Volumes: one name in two teams, each its own; neither create says
	// the other exists.
	for _, c := range []*sdk.Client{a, b} {
		if _, err := c.CreateVolume(ctx, sdk.CreateVolumeRequest{Name: "cache", SizeMiB: 16}); err != nil {
			t.Errorf("volume cache: %v", err)
		}
	}
	d.dropVolumes(a, b, def)
}
