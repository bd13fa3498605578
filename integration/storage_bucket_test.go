package integration

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/sbxhq/sbx/internal/blob/s3/s3test"
	"github.com/sbxhq/sbx/sdk"
)

// A bucket mounted into a sandbox: files written inside become objects and
// objects show up inside; a read-only mount refuses writes; the keys are
// nowhere inside; stop and delete leave no mount and no s3fs.
func TestBucketMounts(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.Bucket()
	ctx := context.Background()
	d := startDaemon(t, "--egress-allow-private", "127.0.0.1") // versitygw on loopback: the operator allows it
	mount := func(path, prefix string, ro bool) sdk.BucketMount {
		return sdk.BucketMount{Bucket: bucket, Prefix: prefix, Path: path, ReadOnly: ro, Endpoint: srv.Endpoint, PathStyle: true,
			AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey}
	}
	bad := mount("/b", "", false)
	bad.SecretAccessKey = ""
	if _, err := d.client.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "nob", Buckets: []sdk.BucketMount{bad}}); !sdk.IsInvalid(err) {
		t.Errorf("a mount without keys: %v", err)
	}
	sb := d.create(sdk.CreateSandboxRequest{Name: "bm", Buckets: []sdk.BucketMount{mount("/mnt/rw", "team", false), mount("/mnt/ro", "team", true)}})
	if len(sb.Buckets) != 2 || sb.Buckets[0].SecretAccessKey != "" || sb.Buckets[0].AccessKeyID != "" {
		t.Errorf("the answer shows the keys or lacks the mounts: %+v", sb.Buckets)
	}
	// The store holds the keys sealed: neither the database nor its WAL
	// has them in the clear.
	for _, f := range []string{"sbx.db", "sbx.db-wal"} {
		if raw, _ := os.ReadFile(filepath.Join(d.dataDir, f)); bytes.Contains(raw, []byte(srv.SecretKey)) {
			t.Errorf("%s holds the bucket's secret key in the clear", f)
		}
	}

	run := func(shell string) sdk.ExecResult {
		t.Helper()
		res, err := d.client.Exec(ctx, "bm", sdk.ExecRequest{Shell: shell})
		if err != nil {
			t.Fatal(err)
		}
		return *res
	}
	if res := run("mkdir -p /mnt/rw/dir && echo inside > /mnt/rw/dir/a.txt && cat /mnt/rw/dir/a.txt"); res.ExitCode != 0 || res.Stdout != "inside\n" {
		t.Fatalf("write through the mount: %+v", res)
	}
	// Written inside: an object.
	obj, err := srv.Client().GetObject(ctx, bucket, "team/dir/a.txt", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(obj)
	obj.Close()
	if err != nil || string(got) != "inside\n" {
		t.Errorf("object of the file written inside: %q, %v", got, err)
	}
	// An object: a file inside.
	if _, err := srv.Client().PutObject(ctx, bucket, "team/from-s3.txt", bytes.NewReader([]byte("outside\n")), 8, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if res := run("cat /mnt/rw/from-s3.txt /mnt/ro/from-s3.txt"); res.Stdout != "outside\noutside\n" {
		t.Errorf("object read inside: %+v", res)
	}
	if res := run("echo x > /mnt/ro/new.txt"); res.ExitCode == 0 || !strings.Contains(res.Stderr, "Read-only") {
		t.Errorf("write to the read-only mount: %+v", res)
	}
	// The keys are nowhere inside: files, environment, mount options.
	res := run("grep -rls -e '" + srv.SecretKey + "' -e '" + srv.AccessKey + ":' / --exclude-dir=proc --exclude-dir=sys --exclude-dir=mnt 2>/dev/null; " +
		"cat /proc/self/mountinfo /proc/1/environ /proc/self/environ | grep -c -e '" + srv.SecretKey + "' -e passwd_file; env | grep -c '" + srv.SecretKey + "'")
	if strings.Contains(res.Stdout, "/") || !strings.HasPrefix(res.Stdout, "0\n0") {
		t.Errorf("the keys show inside the sandbox: %+v", res)
	}

	// Stop: the host mount and s3fs go; start: back.
	if _, err := d.client.StopSandbox(ctx, "bm", sdk.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	buckets := filepath.Join(d.dataDir, "sandboxes", sb.ID, "buckets")
	if _, err := os.Stat(buckets); !errors.Is(err, fs.ErrNotExist) || len(mountsUnder(buckets)) > 0 {
		t.Errorf("bucket mounts left after stop: %v %v", err, mountsUnder(buckets))
	}
	waitFor(t, 10*time.Second, "s3fs to exit after stop", func() bool { return len(s3fsUnder(d.dataDir)) == 0 })
	if res := run("cat /mnt/rw/dir/a.txt"); res.Stdout != "inside\n" {
		t.Errorf("after a restart: %+v", res)
	}
	if err := d.client.DeleteSandbox(ctx, "bm", true); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "s3fs to exit after delete", func() bool { return len(s3fsUnder(d.dataDir)) == 0 })
	d.assertNoLeaks()
}

// s3fsUnder lists the s3fs processes whose command line names a path under dir.
func s3fsUnder(dir string) []string {
	var out []string
	pids, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range pids {
		b, err := os.ReadFile(p)
		if err == nil && strings.HasPrefix(string(b), "s3fs\x00") && strings.Contains(string(b), dir+"/") {
			out = append(out, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

// A bucket mounted into a running sandbox: files go both ways, the keys
// stay out, a path through a symlink is refused, unmount and delete leave
// no mount and no s3fs.
func TestBucketMountsLive(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.Bucket()
	ctx := context.Background()
	d := startDaemon(t, "--egress-allow-private", "127.0.0.1") // versitygw on loopback: the operator allows it
	sb := d.create(sdk.CreateSandboxRequest{Name: "live"})
	run := func(shell string) sdk.ExecResult {
		t.Helper()
		res, err := d.client.Exec(ctx, "live", sdk.ExecRequest{Shell: shell})
		if err != nil {
			t.Fatal(err)
		}
		return *res
	}
	mount := sdk.BucketMount{Bucket: bucket, Prefix: "lv", Path: "/mnt/live", Endpoint: srv.Endpoint, PathStyle: true,
		AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey}
	got, err := d.client.MountBucket(ctx, "live", mount)
	if err != nil {
		t.Fatal(err)
	}
	if got.SecretAccessKey != "" || got.AccessKeyID != "" || got.Path != "/mnt/live" {
		t.Errorf("answer: %+v", got)
	}
	if _, err := d.client.MountBucket(ctx, "live", mount); apiCode(err) != "BUCKET_MOUNT_EXISTS" {
		t.Errorf("a second mount at the same path: %v", err)
	}
	if res := run("echo inside > /mnt/live/a.txt && cat /mnt/live/a.txt"); res.ExitCode != 0 || res.Stdout != "inside\n" {
		t.Fatalf("write through the live mount: %+v", res)
	}
	obj, err := srv.Client().GetObject(ctx, bucket, "lv/a.txt", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(obj)
	obj.Close()
	if err != nil || string(data) != "inside\n" {
		t.Errorf("object of the file written inside: %q, %v", data, err)
	}
	if _, err := srv.Client().PutObject(ctx, bucket, "lv/b.txt", bytes.NewReader([]byte("outside\n")), 8, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if res := run("cat /mnt/live/b.txt"); res.Stdout != "outside\n" {
		t.Errorf("object read inside: %+v", res)
	}
	if res := run("cat /proc/self/mountinfo /proc/1/environ | grep -c -e '" + srv.SecretKey + "' -e passwd_file"); res.Stdout != "0\n" {
		t.Errorf("the keys show inside the sandbox: %+v", res)
	}
	// A mount point reached through a symlink is refused, and leaves nothing.
	run("ln -s /etc /mnt/link")
	bad := mount
	bad.Path = "/mnt/link/x"
	if _, err := d.client.MountBucket(ctx, "live", bad); apiCode(err) != "INVALID_BUCKET_MOUNT" {
		t.Errorf("a mount through a symlink: %v, want INVALID_BUCKET_MOUNT", err)
	}
	waitFor(t, 10*time.Second, "s3fs of the refused mount to exit", func() bool { return len(s3fsUnder(d.dataDir)) == 1 })
	if res := run("test -e /etc/x; echo $?"); res.Stdout != "1\n" {
		t.Errorf("the refused mount made /etc/x: %+v", res)
	}

	if err := d.client.UnmountBucket(ctx, "live", "/mnt/live"); err != nil {
		t.Fatal(err)
	}
	if res := run("grep -c ' /mnt/live ' /proc/self/mountinfo"); res.Stdout != "0\n" {
		t.Errorf("still mounted inside after unmount: %+v", res)
	}
	waitFor(t, 10*time.Second, "s3fs to exit after unmount", func() bool { return len(s3fsUnder(d.dataDir)) == 0 })
	if m := mountsUnder(filepath.Join(d.dataDir, "sandboxes", sb.ID, "buckets")); len(m) > 0 {
		t.Errorf("host mounts after unmount: %v", m)
	}
	if err := d.client.UnmountBucket(ctx, "live", "/mnt/live"); apiCode(err) != "BUCKET_MOUNT_NOT_FOUND" {
		t.Errorf("a second unmount: %v", err)
	}

	// Mounted again, then the sandbox deleted: nothing stays.
	if _, err := d.client.MountBucket(ctx, "live", mount); err != nil {
		t.Fatal(err)
	}
	if res := run("cat /mnt/live/a.txt"); res.Stdout != "inside\n" {
		t.Errorf("after mounting again: %+v", res)
	}
	if err := d.client.DeleteSandbox(ctx, "live", true); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "s3fs to exit after delete", func() bool { return len(s3fsUnder(d.dataDir)) == 0 })
	d.assertNoLeaks()
}
