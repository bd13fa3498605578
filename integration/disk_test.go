package integration

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// TestFullHostDisk fills the host's data disk from inside a sandbox without
// diskMiB. The operator must still be able to force-stop and delete it
// (the store records both on a full disk), and new growth is refused with
// 507 INSUFFICIENT_STORAGE, never 500. Once the sandbox is gone the disk
// works again. The data dir is a small ext4 filesystem of the test's own.
func TestFullHostDisk(t *testing.T) {
	dataDir := smallFilesystem(t, 192)
	d := startDaemonAt(t, dataDir, fullDiskArgs()...)
	ctx := context.Background()
	ballast := filepath.Join(dataDir, "disk-ballast")
	if _, err := os.Stat(ballast); err != nil {
		t.Errorf("the daemon made no disk ballast: %v", err)
	}
	hog := d.create(sdk.CreateSandboxRequest{Name: "hog"})

	fillHostDisk(t, d, hog.ID, dataDir)

	wantFull := func(what string, err error) {
		t.Helper()
		var apiErr *sdk.APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 507 {
			t.Errorf("%s on a full disk: %v, want 507", what, err)
		}
	}
	_, err := d.client.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "refused"})
	wantFull("create", err)
	var apiErr *sdk.APIError
	if errors.As(err, &apiErr) && (apiErr.Code != "INSUFFICIENT_STORAGE" || !strings.Contains(apiErr.Message, "reserve")) {
		t.Errorf("create on a full disk: %v, want INSUFFICIENT_STORAGE naming the reserve", err)
	}
	if _, err := d.client.GetSandbox(ctx, "refused"); !sdk.IsNotFound(err) {
		t.Errorf("a refused create left a sandbox: %v", err)
	}
	_, err = d.client.Upload(ctx, hog.ID, "/workspace/more", io.LimitReader(zeros{}, 1<<20), 0o644)
	wantFull("upload", err)
	_, err = d.client.CreateSnapshot(ctx, hog.ID, sdk.CreateSnapshotRequest{Name: "snap"})
	wantFull("snapshot", err)
	_, err = d.client.ForkSandbox(ctx, hog.ID, sdk.ForkRequest{Name: "fork"})
	wantFull("fork", err)
	_, err = d.client.ImportImage(ctx, "img", strings.NewReader("not read: refused first"))
	wantFull("image import", err)

	// The operator's way out works on the full disk.
	if _, err := d.client.StopSandbox(ctx, hog.ID, sdk.StopOptions{Force: true}); err != nil {
		t.Fatalf("force-stop on a full disk: %v", err)
	}
	if got, err := d.client.GetSandbox(ctx, hog.ID); err != nil || got.State != sdk.StateStopped {
		t.Errorf("after force-stop: %+v, %v", got, err)
	}
	_, err = d.client.StartSandbox(ctx, hog.ID)
	wantFull("start", err)
	if err := d.client.DeleteSandbox(ctx, hog.ID, true); err != nil {
		t.Fatalf("delete on a full disk: %v", err)
	}
	if _, err := d.client.GetSandbox(ctx, hog.ID); !sdk.IsNotFound(err) {
		t.Errorf("after delete: %v, want not found", err)
	}
	d.assertNoLeaks()

	// Deleting freed the disk: the ballast is back and sandboxes run again.
	if _, err := os.Stat(ballast); err != nil {
		t.Errorf("the ballast did not come back once the disk had room: %v", err)
	}
	again := d.create(sdk.CreateSandboxRequest{Name: "again"})
	if out := d.exec(again.ID, "echo ok"); out != "ok" {
		t.Errorf("exec after the disk was freed: %q", out)
	}
}

// plainDisk gives sandboxes created without diskMiB no disk of their own
// (--default-disk-mib 0) unless args name a default: most tests look at a
// sandbox's upper directory in the data dir or count the data dir's loop
// devices. TestDefaultDiskKeepsTheReserve runs the shipped default.
func plainDisk(args []string) []string {
	if slices.Contains(args, "--default-disk-mib") {
		return args
	}
	return append(args, "--default-disk-mib", "0")
}

// fullDiskArgs are the flags of a daemon whose data disk a test fills from
// a sandbox: a 32 MiB reserve, and sandboxes without a disk of their own.
func fullDiskArgs() []string {
	return []string{"--disk-reserve-mib", "32", "--default-disk-mib", "0"}
}

// fillHostDisk fills the data disk at dataDir from inside sandbox id, which
// has no disk of its own, to the last block.
func fillHostDisk(t *testing.T, d *daemon, id, dataDir string) {
	t.Helper()
	ctx := context.Background()
	res, err := d.client.Exec(ctx, id, sdk.ExecRequest{Shell: "dd if=/dev/zero of=/workspace/fill bs=1M"})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode == 0 || !strings.Contains(res.Stderr, "No space left") {
		t.Fatalf("filling the host's disk: %+v", res)
	}
	// Take the crumbs too (what delayed allocation had set aside, room for
	// small files), so that the store's next write needs a block it cannot
	// have.
	if _, err := d.client.Exec(ctx, id, sdk.ExecRequest{Shell: "sync; dd if=/dev/zero of=/workspace/fill2 bs=4k; sync; for i in $(seq 100); do echo > /workspace/small$i || break; done; sync"}); err != nil {
		t.Fatal(err)
	}
	if free := freeBytes(t, dataDir); free > 64<<10 {
		t.Fatalf("the disk still has %d bytes free after filling it", free)
	}
}

// TestDefaultDiskKeepsTheReserve: a sandbox created with the daemon's
// defaults (no diskMiB) gets a disk of its own, no bigger than the data
// disk's free space above the reserve, so writing until it is full leaves
// the reserve to the daemon: the hog's own writes fail, the store still
// writes, and once the hog is gone sandboxes are made again.
func TestDefaultDiskKeepsTheReserve(t *testing.T) {
	dataDir := smallFilesystem(t, 256)
	d := startDaemonAt(t, dataDir, "--disk-reserve-mib", "64", "--default-disk-mib", "10240") // sbx serve's default
	ctx := context.Background()
	spare := freeBytes(t, dataDir) - 64<<20
	hog := d.create(sdk.CreateSandboxRequest{Name: "hog"})
	if hog.DiskMiB < 16 || uint64(hog.DiskMiB)<<20 > spare {
		t.Errorf("default diskMiB = %d, want one no bigger than the %d MiB above the reserve", hog.DiskMiB, spare>>20)
	}
	res, err := d.client.Exec(ctx, hog.ID, sdk.ExecRequest{Shell: "dd if=/dev/zero of=/workspace/fill bs=1M; sync"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Stderr, "No space left") {
		t.Errorf("writing until full: %+v, want ENOSPC inside the sandbox", res)
	}
	if free := freeBytes(t, dataDir); free < 32<<20 {
		t.Errorf("a sandbox with the default disk left %d KiB of the data disk free, want most of the 64 MiB reserve", free>>10)
	}
	if res, err := d.client.Exec(ctx, hog.ID, sdk.ExecRequest{Shell: "rm /workspace/fill && echo ok"}); err != nil || res.Stdout != "ok\n" {
		t.Errorf("the hog frees its own disk: %+v, %v", res, err)
	}
	if err := d.client.DeleteSandbox(ctx, hog.ID, true); err != nil {
		t.Fatalf("delete: %v", err)
	}
	next := d.create(sdk.CreateSandboxRequest{Name: "next"})
	if out := d.exec(next.ID, "echo ok"); out != "ok" {
		t.Errorf("exec in a sandbox made after the hog: %q", out)
	}
	// Under a team's disk quota such a sandbox counts its default disk.
	c, _ := d.teamKey("t", sdk.Quotas{DiskMiB: 1 << 20}, allScopes...)
	sb, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "counted"})
	if err != nil {
		t.Fatalf("a sandbox without diskMiB under a disk quota: %v, want one with the default disk", err)
	}
	d.created[sb.ID] = true
	if u, err := c.TeamUsage(ctx, "t"); err != nil || sb.DiskMiB == 0 || u.DiskMiB != sb.DiskMiB {
		t.Errorf("usage: %+v, %v; want the sandbox's default disk (%d MiB)", u, err, sb.DiskMiB)
	}
}

// TestDefaultDisksDoNotOvercommit: the default disks of several sandboxes
// together stay within the data disk's free space (their images are sparse,
// so each create counts what the others may still grow by). When two fill
// their disks, the host's disk keeps room, the first one's filesystem stays
// writable where it has room, and a full one answers an upload with
// 507 NO_SPACE, not READ_ONLY_FILESYSTEM (which a loop-mounted ext4 turns
// into when the host cannot take its writes).
func TestDefaultDisksDoNotOvercommit(t *testing.T) {
	dataDir := smallFilesystem(t, 256)
	d := startDaemonAt(t, dataDir, "--disk-reserve-mib", "32", "--default-disk-mib", "10240") // sbx serve's default
	ctx := context.Background()
	spare := freeBytes(t, dataDir)>>20 - 32
	first := d.create(sdk.CreateSandboxRequest{Name: "first"})
	second := d.create(sdk.CreateSandboxRequest{Name: "second"})
	if sum := uint64(first.DiskMiB + second.DiskMiB); sum > spare+16 {
		t.Errorf("default disks %d + %d MiB, more than the %d MiB above the reserve (and the 16 MiB least disk)", first.DiskMiB, second.DiskMiB, spare)
	}
	res, err := d.client.Exec(ctx, second.ID, sdk.ExecRequest{Shell: "dd if=/dev/zero of=/workspace/fill bs=1M; sync"})
	if err != nil || !strings.Contains(res.Stderr, "No space left") {
		t.Errorf("filling the second sandbox's disk: %+v, %v", res, err)
	}
	for i := 0; ; i++ {
		data := bytes.Repeat([]byte{byte('a' + i%26)}, 24<<20)
		path := "/workspace/up" + strconv.Itoa(i)
		_, err := d.client.Upload(ctx, first.ID, path, bytes.NewReader(data), 0o644)
		if err != nil {
			var apiErr *sdk.APIError
			if !errors.As(err, &apiErr) || apiErr.Code != sdk.CodeNoSpace || apiErr.StatusCode != 507 {
				t.Errorf("upload %d into a full default disk: %v, want 507 NO_SPACE", i, err)
			}
			break
		}
		if i > 2*int(first.DiskMiB)/24 {
			t.Fatalf("%d uploads of 24 MiB fit in a disk of %d MiB", i+1, first.DiskMiB)
		}
		if out := d.exec(first.ID, "sync; md5sum < "+path+" | cut -c1-32"); out != fmt.Sprintf("%x", md5.Sum(data)) {
			t.Errorf("upload %d reads back as %q", i, out)
		}
	}
	if free := freeBytes(t, dataDir); free < 1<<20 {
		t.Errorf("the data disk has %d KiB free with two full default disks", free>>10)
	}
	if out := d.exec(first.ID, "rm /workspace/up0 && echo x > /workspace/small && cat /workspace/small"); out != "x" {
		t.Errorf("the first sandbox's disk after it was full: %q, want it writable", out)
	}
}

// smallFilesystem mounts a fresh ext4 filesystem of sizeMiB (no blocks
// reserved for root) on a directory of the test's own and returns it.
// The image is a sparse file; the loop device goes with the unmount.
func smallFilesystem(t *testing.T, sizeMiB int64) string {
	t.Helper()
	img := filepath.Join(t.TempDir(), "fs.img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	err = f.Truncate(sizeMiB << 20)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", "-m", "0", img).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v: %s", err, out)
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-o", "loop", img, dir).CombinedOutput(); err != nil {
		t.Fatalf("mount %s: %v: %s", img, err, out)
	}
	// Registered after TempDir, so it runs before TempDir's removal and
	// after the daemon's cleanup (registered later still).
	t.Cleanup(func() {
		deadline := time.Now().Add(10 * time.Second)
		for syscall.Unmount(dir, 0) == syscall.EBUSY && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		syscall.Unmount(dir, syscall.MNT_DETACH)
		waitFor(t, 10*time.Second, "the loop device of "+img+" to go", func() bool {
			return len(loopDevicesUnder(filepath.Dir(img))) == 0
		})
	})
	return dir
}

func freeBytes(t *testing.T, dir string) uint64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return st.Bavail * uint64(st.Bsize)
}

// TestPoolServesDefaultDiskCreates: under the shipped default disk, a create
// without diskMiB is served by a warm pool whose template names none, though
// the default disk's size follows the free space at each create.
func TestPoolServesDefaultDiskCreates(t *testing.T) {
	d := startDaemon(t, "--default-disk-mib", "10240") // sbx serve's default
	ctx := context.Background()
	if _, err := d.client.CreatePool(ctx, sdk.CreatePoolRequest{Name: "p", Min: 2, Max: 2}); err != nil {
		t.Fatal(err)
	}
	d.poolReady("p", 2) // the pool is left to the harness's cleanup
	before := d.poolInstances()
	sb := d.create(sdk.CreateSandboxRequest{Name: "warm"})
	if !before[sb.ID] {
		t.Errorf("a create without diskMiB started cold (%s is not one of the pool's instances)", sb.ID)
	}
	if sb.DiskMiB == 0 {
		t.Errorf("the adopted sandbox has no disk of its own")
	}
	// Refilled, so that no instance is starting when the cleanup deletes
	// the pool (DeletePool does not wait for one that is).
	d.poolReady("p", 2)
}

// TestForkOfASandboxWithADisk: a fork of a sandbox with a disk of its own
// gets a disk of the same size holding the parent's files.
func TestForkOfASandboxWithADisk(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	d.create(sdk.CreateSandboxRequest{Name: "p", DiskMiB: 32})
	d.exec("p", "echo kept > /workspace/f")
	res, err := d.client.ForkSandbox(ctx, "p", sdk.ForkRequest{})
	if err != nil {
		t.Fatalf("fork of a sandbox with a disk: %v", err)
	}
	fork := res.Forks[0]
	d.created[fork.ID] = true
	if fork.DiskMiB != 32 {
		t.Errorf("the fork's diskMiB = %d, want 32", fork.DiskMiB)
	}
	if out := d.exec(fork.ID, "cat /workspace/f; df -m /workspace | tail -1 | awk '{print $2}'"); !strings.HasPrefix(out, "kept\n") {
		t.Errorf("in the fork: %q, want the parent's file on a disk of its own", out)
	}
}
