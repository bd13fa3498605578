package integration

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// Sandboxes of both classes share one volume; its size limit holds;
// deleting it is refused while mounted; it outlives its sandboxes, an
// archived sandbox keeps it, and nothing is left once it is deleted.
func TestVolumesShared(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	if _, err := d.client.CreateVolume(ctx, sdk.CreateVolumeRequest{Name: "Bad_Name"}); !sdk.IsInvalid(err) {
		t.Errorf("bad name: %v", err)
	}
	if _, err := d.client.CreateVolume(ctx, sdk.CreateVolumeRequest{Name: "tiny", SizeMiB: 1}); !sdk.IsInvalid(err) {
		t.Errorf("size 1 MiB: %v", err)
	}
	v, err := d.client.CreateVolume(ctx, sdk.CreateVolumeRequest{Name: "shared", SizeMiB: 24})
	if err != nil || v.SizeMiB != 24 {
		t.Fatalf("create volume: %+v, %v", v, err)
	}
	if _, err := d.client.CreateVolume(ctx, sdk.CreateVolumeRequest{Name: "shared"}); !sdk.IsConflict(err) {
		t.Errorf("second create: %v", err)
	}
	if _, err := d.client.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "nov", Volumes: []sdk.VolumeMount{{Name: "missing", Path: "/data"}}}); !sdk.IsNotFound(err) {
		t.Errorf("create with a missing volume: %v", err)
	}
	if _, err := d.client.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "nov", Volumes: []sdk.VolumeMount{{Name: "shared", Path: "/proc/x"}}}); !sdk.IsInvalid(err) {
		t.Errorf("create with a volume at /proc/x: %v", err)
	}

	mount := []sdk.VolumeMount{{Name: "shared", Path: "/data"}}
	a := d.create(sdk.CreateSandboxRequest{Name: "va", Volumes: mount})
	d.create(sdk.CreateSandboxRequest{Name: "vb", Volumes: mount})
	d.create(sdk.CreateSandboxRequest{Name: "vg", Class: "gvisor", Volumes: mount})
	d.create(sdk.CreateSandboxRequest{Name: "vr", Volumes: []sdk.VolumeMount{{Name: "shared", Path: "/ro", ReadOnly: true}}})
	if len(a.Volumes) != 1 || a.Volumes[0] != mount[0] {
		t.Errorf("sandbox volumes: %+v", a.Volumes)
	}

	run := func(sb, shell string) sdk.ExecResult {
		t.Helper()
		res, err := d.client.Exec(ctx, sb, sdk.ExecRequest{Shell: shell})
		if err != nil {
			t.Fatalf("%s: %s: %v", sb, shell, err)
		}
		return *res
	}
	if res := run("va", "echo from-a > /data/note && mkdir /data/dir && stat -c '%u' /data/note"); res.ExitCode != 0 || strings.TrimSpace(res.Stdout) != "0" {
		t.Fatalf("write in va: %+v", res)
	}
	if res := run("vb", "cat /data/note && echo from-b >> /data/note && stat -c '%u' /data/note"); res.ExitCode != 0 || res.Stdout != "from-a\n0\n" {
		t.Errorf("read and append in vb: %+v", res)
	}
	if res := run("vg", "cat /data/note && echo from-g > /data/dir/g"); res.ExitCode != 0 || res.Stdout != "from-a\nfrom-b\n" {
		t.Errorf("read and write in the gvisor sandbox: %+v", res)
	}
	if res := run("va", "cat /data/dir/g"); res.Stdout != "from-g\n" {
		t.Errorf("va reads what vg wrote: %+v", res)
	}
	if res := run("vr", "cat /ro/note; echo x > /ro/other"); res.ExitCode == 0 || !strings.Contains(res.Stdout, "from-b") || !strings.Contains(res.Stderr, "Read-only") {
		t.Errorf("read-only mount: %+v", res)
	}
	// The size limit: ENOSPC inside, the host's disk untouched.
	res := run("vb", "dd if=/dev/zero of=/data/fill bs=1M count=64 2>&1; sync; rm /data/fill")
	if res.ExitCode == 0 && !strings.Contains(res.Stdout, "No space left on device") {
		t.Errorf("writing 64 MiB into a 24 MiB volume: %+v", res)
	}
	if !strings.Contains(res.Stdout, "No space left on device") {
		t.Errorf("no ENOSPC message: %+v", res)
	}

	// In use: refused; the list says by whom.
	if err := d.client.DeleteVolume(ctx, "shared", false); !sdk.IsConflict(err) || !strings.Contains(err.Error(), a.ID) {
		t.Errorf("delete while mounted: %v", err)
	}
	list, err := d.client.ListVolumes(ctx)
	if err != nil || len(list) != 1 || len(list[0].UsedBy) != 4 || list[0].UsedMiB < 0 {
		t.Errorf("list: %+v, %v", list, err)
	}

	// An archived sandbox keeps its volume.
	if _, err := d.client.StopSandbox(ctx, "va", sdk.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	if sb, err := d.client.ArchiveSandbox(ctx, "va"); err != nil || len(sb.Volumes) != 1 {
		t.Fatalf("archive: %+v, %v", sb, err)
	}
	if res := run("va", "cat /data/dir/g"); res.Stdout != "from-g\n" { // restores and starts
		t.Errorf("after archive and restore: %+v", res)
	}

	// The volume outlives its sandboxes.
	for _, name := range []string{"va", "vb", "vg", "vr"} {
		if err := d.client.DeleteSandbox(ctx, name, true); err != nil {
			t.Fatal(err)
		}
	}
	d.create(sdk.CreateSandboxRequest{Name: "vc", Volumes: mount})
	if res := run("vc", "cat /data/note"); res.Stdout != "from-a\nfrom-b\n" {
		t.Errorf("a new sandbox reads the old files: %+v", res)
	}
	if err := d.client.DeleteSandbox(ctx, "vc", true); err != nil {
		t.Fatal(err)
	}
	if v, err := d.client.GetVolume(ctx, "shared"); err != nil || !slices.Equal(v.UsedBy, []string{}) {
		t.Errorf("after its sandboxes are gone: %+v, %v", v, err)
	}
	if err := d.client.DeleteVolume(ctx, "shared", false); err != nil {
		t.Fatal(err)
	}
	if _, err := d.client.GetVolume(ctx, "shared"); !sdk.IsNotFound(err) {
		t.Errorf("get after delete: %v", err)
	}
	waitFor(t, 10*time.Second, "the volume's loop device to detach", func() bool { return len(loopDevicesUnder(d.dataDir)) == 0 })
	if m := mountsUnder(d.dataDir); len(m) > 0 {
		t.Errorf("mounts left: %v", m)
	}
	if entries, _ := os.ReadDir(filepath.Join(d.dataDir, "volumes")); len(entries) != 0 {
		t.Errorf("volume files left: %v", entries)
	}
	d.assertNoLeaks()
}
