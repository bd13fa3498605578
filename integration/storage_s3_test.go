package integration

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/blob/s3/s3test"
	"github.com/sbxhq/sbx/sdk"
)

// A sandbox archived to S3 by one daemon restores, whole, on a second daemon
// with another data dir and the same bucket, and a snapshot taken on the
// first starts on the second; a damaged object is refused first and
// nothing is lost.
func TestS3ArchiveRestoresOnAnotherDaemon(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.Bucket()
	ctx := context.Background()
	d1 := startDaemon(t, srv.Flags(bucket, "fleet")...)
	// No network: the second daemon has another bridge and subnet.
	sb := d1.create(sdk.CreateSandboxRequest{Name: "arch", Network: "none"})
	if res, err := d1.client.Exec(ctx, "arch", sdk.ExecRequest{Shell: treeScript}); err != nil || res.ExitCode != 0 {
		t.Fatalf("build tree: %+v, %v", res, err)
	}
	before, err := d1.client.Exec(ctx, "arch", sdk.ExecRequest{Shell: manifestScript})
	if err != nil || before.ExitCode != 0 || !strings.Contains(before.Stdout, "hard link kept") {
		t.Fatalf("manifest: %+v, %v", before, err)
	}
	if _, err := d1.client.StopSandbox(ctx, "arch", sdk.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if sb, err := d1.client.ArchiveSandbox(ctx, "arch"); err != nil || sb.State != sdk.StateArchived {
		t.Fatalf("archive = %+v, %v", sb, err)
	}
	t.Logf("archive of a 50 MiB tree to S3 took %s", time.Since(began))
	object := filepath.Join(srv.Root, bucket, "fleet", "sandboxes", sb.ID, "upper.tar.zst")
	if fi, err := os.Stat(object); err != nil || fi.Size() < 50<<20 {
		t.Fatalf("archive object in the bucket: %v %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(d1.dataDir, "sandboxes", sb.ID, "upper")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the local files are still there after archiving: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(d1.dataDir, "blobs")); len(entries) != 0 {
		t.Errorf("an S3 daemon wrote to its local blob dir: %v", entries)
	}

	// A snapshot taken here starts there too.
	d1.create(sdk.CreateSandboxRequest{Name: "snapsrc", Network: "none"})
	if res, err := d1.client.Exec(ctx, "snapsrc", sdk.ExecRequest{Shell: "echo from-the-snapshot > /workspace/snap.txt"}); err != nil || res.ExitCode != 0 {
		t.Fatalf("write: %+v, %v", res, err)
	}
	if _, err := d1.client.CreateSnapshot(ctx, "snapsrc", sdk.CreateSnapshotRequest{Name: "snap"}); err != nil {
		t.Fatal(err)
	}
	if err := d1.client.DeleteSandbox(ctx, "snapsrc", true); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(filepath.Join(srv.Root, bucket, "fleet", "layers")); len(entries) < 2 {
		t.Errorf("layers in the bucket: %v (want the image's and the snapshot's)", entries)
	}

	// The second daemon: another data dir with the first one's records (what
	// a shared control plane would give it) and nothing else: no sandbox
	// files, no image or snapshot layers — those come from the bucket.
	d1.stop()
	dir2 := t.TempDir()
	db, err := os.ReadFile(filepath.Join(d1.dataDir, "sbx.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir2, "sbx.db"), db, 0o600); err != nil {
		t.Fatal(err)
	}
	d2 := startDaemonAt(t, dir2, srv.Flags(bucket, "fleet")...)
	d2.created[sb.ID] = true

	// A flipped byte in the bucket: the restore is refused, the sandbox
	// stays archived and the object stays where it is.
	orig, err := os.ReadFile(object)
	if err != nil {
		t.Fatal(err)
	}
	damaged := append([]byte(nil), orig...)
	damaged[len(damaged)/2] ^= 0x55
	if err := os.WriteFile(object, damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := d2.client.StartSandbox(ctx, "arch"); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("start from a damaged archive: %v, want a refusal that says it is damaged", err)
	}
	if got, err := d2.client.GetSandbox(ctx, "arch"); err != nil || got.State != sdk.StateArchived {
		t.Errorf("after the refused restore: %+v, %v (want archived)", got, err)
	}
	if _, err := os.Stat(object); err != nil {
		t.Fatalf("the archive is gone after a refused restore: %v", err)
	}
	if err := os.WriteFile(object, orig, 0o644); err != nil {
		t.Fatal(err)
	}

	began = time.Now()
	started, err := d2.client.StartSandbox(ctx, "arch")
	t.Logf("restore from S3 and start on the second daemon took %s", time.Since(began))
	if err != nil || started.State != sdk.StateStarted {
		t.Fatalf("start on the second daemon = %+v, %v", started, err)
	}
	after, err := d2.client.Exec(ctx, "arch", sdk.ExecRequest{Shell: manifestScript})
	if err != nil || after.Stdout != before.Stdout {
		t.Errorf("restored tree differs (%v)\nbefore:\n%s\nafter:\n%s", err, before.Stdout, after.Stdout)
	}
	for _, want := range []string{"/etc/group stays deleted", "/root: new", "./big F 644 0:0 52428800 2"} {
		if !strings.Contains(after.Stdout, want) {
			t.Errorf("restored tree lacks %q:\n%s", want, after.Stdout)
		}
	}
	if _, err := os.Stat(object); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the archive object was not removed after the restore: %v", err)
	}
	d2.create(sdk.CreateSandboxRequest{Name: "fromsnap", Snapshot: "snap", Network: "none"})
	if res, err := d2.client.Exec(ctx, "fromsnap", sdk.ExecRequest{Shell: "cat /workspace/snap.txt"}); err != nil || res.Stdout != "from-the-snapshot\n" {
		t.Errorf("a sandbox from the first daemon's snapshot: %+v, %v", res, err)
	}
}

// The S3 server goes away in the middle of an archive: the archive fails
// with an error that says so, the sandbox is stopped with its local files,
// and a later archive (server back) and restore work.
func TestS3OutageMidArchive(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.Bucket()
	ctx := context.Background()
	d := startDaemon(t, srv.Flags(bucket, "")...)
	sb := d.create(sdk.CreateSandboxRequest{Name: "out"})
	res, err := d.client.Exec(ctx, "out", sdk.ExecRequest{Shell: "dd if=/dev/urandom of=/workspace/big bs=1M count=64 2>/dev/null && sha256sum /workspace/big"})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("write: %+v, %v", res, err)
	}
	sum := strings.Fields(res.Stdout)[0]
	if _, err := d.client.StopSandbox(ctx, "out", sdk.StopOptions{}); err != nil {
		t.Fatal(err)
	}

	archived := make(chan error, 1)
	go func() { _, err := d.client.ArchiveSandbox(ctx, "out"); archived <- err }()
	// Stop the server once the first bytes of the upload have landed.
	waitFor(t, 60*time.Second, "the upload to start", func() bool { return bytesUnder(filepath.Join(srv.Root, bucket)) > 0 })
	srv.Stop()
	err = <-archived
	if err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("archive while S3 is down: %v, want an error that says S3 is unreachable", err)
	}
	got, err := d.client.GetSandbox(ctx, "out")
	if err != nil || got.State != sdk.StateStopped {
		t.Fatalf("after the failed archive: %+v, %v (want stopped)", got, err)
	}
	if _, err := os.Stat(filepath.Join(d.dataDir, "sandboxes", sb.ID, "upper", "workspace", "big")); err != nil {
		t.Errorf("local files after the failed archive: %v", err)
	}

	srv.Restart()
	if got, err := d.client.ArchiveSandbox(ctx, "out"); err != nil || got.State != sdk.StateArchived {
		t.Fatalf("archive once S3 is back: %+v, %v", got, err)
	}
	if _, err := d.client.StartSandbox(ctx, "out"); err != nil {
		t.Fatal(err)
	}
	res, err = d.client.Exec(ctx, "out", sdk.ExecRequest{Shell: "sha256sum /workspace/big"})
	if err != nil || !strings.HasPrefix(res.Stdout, sum) {
		t.Errorf("after the restore: %+v, %v (want %s)", res, err, sum)
	}
}

// bytesUnder sums the sizes of the regular files below dir.
func bytesUnder(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			if fi, err := e.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// A gvisor memory snapshot made on one daemon starts, with its processes
// and their memory, on a second daemon with another data dir and the same
// bucket: its memory image travels through S3, checked on the way in.
func TestS3MemorySnapshotOnAnotherDaemon(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.Bucket()
	ctx := context.Background()
	d1 := gvisorDaemon(t, srv.Flags(bucket, "fleet")...)
	d1.create(sdk.CreateSandboxRequest{Name: "src", Class: "gvisor", Network: "none"})
	d1.startWorkload("src")
	nonce := d1.verify("src").nonce
	at := d1.count("src")
	if _, err := d1.client.CreateSnapshot(ctx, "src", sdk.CreateSnapshotRequest{Name: "warm", IncludeMemory: true}); err != nil {
		t.Fatal(err)
	}
	// Kept under the snapshot's storage key (store.NewSnapshotKey).
	objects, _ := filepath.Glob(filepath.Join(srv.Root, bucket, "fleet", "snapshots", "_warm.*", "memory.tar.zst"))
	if len(objects) != 1 {
		t.Fatalf("memory images of warm in the bucket: %v", objects)
	}
	object := objects[0]
	if fi, err := os.Stat(object); err != nil || fi.Size() < 1<<20 {
		t.Fatalf("memory image in the bucket: %v %v", fi, err)
	}
	if err := d1.client.DeleteSandbox(ctx, "src", true); err != nil {
		t.Fatal(err)
	}

	// The second daemon has the first one's records and nothing else.
	d1.stop()
	dir2 := t.TempDir()
	db, err := os.ReadFile(filepath.Join(d1.dataDir, "sbx.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir2, "sbx.db"), db, 0o600); err != nil {
		t.Fatal(err)
	}
	d2 := startDaemonAt(t, dir2, srv.Flags(bucket, "fleet")...)
	// A memory image restores only onto the mounts it was saved with, which
	// the network decides: another network is refused before anything is
	// made, and none given takes the snapshot's.
	_, err = d2.client.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "warm-bridge", Snapshot: "warm", Network: "bridge"})
	if apiCode(err) != string(sdk.CodeMemorySnapshotNetwork) {
		t.Errorf("create from a network-none memory snapshot with network bridge: %v, want %s", err, sdk.CodeMemorySnapshotNetwork)
	}
	if _, err := d2.client.GetSandbox(ctx, "warm-bridge"); apiCode(err) != string(sdk.CodeSandboxNotFound) {
		t.Errorf("the refused create left a sandbox: %v", err)
	}
	sb := d2.create(sdk.CreateSandboxRequest{Name: "warm-1", Snapshot: "warm"})
	if sb.Class != "gvisor" || sb.Network != sdk.NetworkNone {
		t.Errorf("class %q network %q, want gvisor and the snapshot's none", sb.Class, sb.Network)
	}
	d2.checkWorkload("warm-1", nonce, at)
	if _, err := os.Stat(filepath.Join(dir2, "snapshots", filepath.Base(filepath.Dir(object)), "memory")); err != nil {
		t.Errorf("the fetched memory image is not kept for the next sandbox: %v", err)
	}
	if err := d2.client.DeleteSnapshot(ctx, "warm"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(object); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the memory image object outlives its snapshot: %v", err)
	}
}
