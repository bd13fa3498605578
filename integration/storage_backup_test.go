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

// backupTree builds a directory with what a backup must keep.
const backupTree = `set -e
mkdir -p /workspace/proj/sub/empty
cd /workspace/proj
dd if=/dev/urandom of=data bs=1M count=4 2>/dev/null
ln data hard
ln -s sub/file link
echo hi > sub/file
chown 1234:5678 sub/file
chmod 4750 sub/file
chmod 0700 sub/empty
`

// backupManifest describes the directory at $1.
const backupManifest = `cd "$1" && find . | sort | while read f; do
  if [ -L "$f" ]; then echo "$f L $(readlink "$f")"
  elif [ -d "$f" ]; then echo "$f D $(stat -c '%a %u:%g' "$f")"
  else echo "$f F $(stat -c '%a %u:%g %s %h' "$f") $(sha256sum < "$f" | cut -d' ' -f1)"; fi
done`

// A directory backed up into S3 restores into another sandbox exactly;
// a busy target and a damaged backup are refused without writing; an
// expiring backup goes away with its object.
func TestBackupsRoundTripAndExpiry(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.Bucket()
	ctx := context.Background()
	d := startDaemon(t, srv.Flags(bucket, "b")...)
	d.create(sdk.CreateSandboxRequest{Name: "src"})
	d.create(sdk.CreateSandboxRequest{Name: "dst"})
	manifest := func(sb, dir string) string {
		t.Helper()
		res, err := d.client.Exec(ctx, sb, sdk.ExecRequest{Cmd: []string{"sh", "-c", backupManifest, "sh", dir}})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("manifest of %s:%s: %+v, %v", sb, dir, res, err)
		}
		return res.Stdout
	}
	if res, err := d.client.Exec(ctx, "src", sdk.ExecRequest{Shell: backupTree}); err != nil || res.ExitCode != 0 {
		t.Fatalf("build tree: %+v, %v", res, err)
	}
	before := manifest("src", "/workspace/proj")

	if _, err := d.client.CreateBackup(ctx, "src", sdk.CreateBackupRequest{Path: "relative"}); !sdk.IsInvalid(err) {
		t.Errorf("relative path: %v", err)
	}
	if _, err := d.client.CreateBackup(ctx, "src", sdk.CreateBackupRequest{Path: "/nonexistent"}); !sdk.IsNotFound(err) {
		t.Errorf("missing directory: %v", err)
	}
	b, err := d.client.CreateBackup(ctx, "src", sdk.CreateBackupRequest{Path: "/workspace/proj", Name: "proj"})
	if err != nil || b.Name != "proj" || b.SizeBytes < 4<<20 || b.ExpiresAt != nil {
		t.Fatalf("create backup: %+v, %v", b, err)
	}
	object := filepath.Join(srv.Root, bucket, "b", "backups", b.ID+".tar.zst")
	if _, err := os.Stat(object); err != nil {
		t.Fatalf("backup object in the bucket: %v", err)
	}

	if _, err := d.client.RestoreBackup(ctx, b.ID, sdk.RestoreBackupRequest{Sandbox: "dst", Path: "/restored"}); err != nil {
		t.Fatal(err)
	}
	if after := manifest("dst", "/restored"); after != before || !strings.Contains(after, "./sub/file F 4750 1234:5678") {
		t.Errorf("restored directory differs\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// Over a directory that is not empty: refused.
	if _, err := d.client.RestoreBackup(ctx, b.ID, sdk.RestoreBackupRequest{Sandbox: "src"}); !sdk.IsConflict(err) {
		t.Errorf("restore over a full directory: %v", err)
	}
	if got := manifest("src", "/workspace/proj"); got != before {
		t.Errorf("the refused restore changed the directory:\n%s", got)
	}
	// A damaged object: refused, nothing written.
	orig, err := os.ReadFile(object)
	if err != nil {
		t.Fatal(err)
	}
	bad := append([]byte(nil), orig...)
	bad[len(bad)/2] ^= 0x5a
	os.WriteFile(object, bad, 0o644)
	if _, err := d.client.RestoreBackup(ctx, b.ID, sdk.RestoreBackupRequest{Sandbox: "dst", Path: "/r2"}); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("restore of a damaged backup: %v", err)
	}
	if res, _ := d.client.Exec(ctx, "dst", sdk.ExecRequest{Shell: "ls -A / | grep -c sbx-restore; ls -d /r2"}); res == nil || res.ExitCode == 0 || !strings.HasPrefix(res.Stdout, "0") {
		t.Errorf("a damaged restore left something: %+v", res)
	}
	os.WriteFile(object, orig, 0o644)

	if list, err := d.client.ListBackups(ctx, "src"); err != nil || len(list) != 1 || list[0].ID != b.ID {
		t.Errorf("list: %+v, %v", list, err)
	}
	if list, err := d.client.ListBackups(ctx, "dst"); err != nil || len(list) != 0 {
		t.Errorf("list of dst: %+v, %v", list, err)
	}

	// Expiry.
	short, err := d.client.CreateBackup(ctx, "src", sdk.CreateBackupRequest{Path: "/workspace/proj/sub", ExpiresInSeconds: 1})
	if err != nil || short.ExpiresAt == nil {
		t.Fatalf("create expiring backup: %+v, %v", short, err)
	}
	shortObject := filepath.Join(srv.Root, bucket, "b", "backups", short.ID+".tar.zst")
	waitFor(t, 30*time.Second, "the expired backup's object to go", func() bool {
		_, err := os.Stat(shortObject)
		return errors.Is(err, fs.ErrNotExist)
	})
	if _, err := d.client.GetBackup(ctx, short.ID); !sdk.IsNotFound(err) {
		t.Errorf("get of an expired backup: %v", err)
	}

	if err := d.client.DeleteBackup(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(object); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("object after delete: %v", err)
	}
	if err := d.client.DeleteBackup(ctx, b.ID); !sdk.IsNotFound(err) {
		t.Errorf("second delete: %v", err)
	}
}
