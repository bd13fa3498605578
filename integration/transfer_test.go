package integration

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sbxhq/sbx/sdk"
)

// The transfer path (internal/api/files_fd.go): a container sandbox's
// uploads and downloads are copied by the daemon into and out of a file
// its agent opened. These tests hold it to what the streamed path did.

// randomBytes returns n random bytes and their sha256 in hex.
func randomBytes(t *testing.T, n int) ([]byte, string) {
	t.Helper()
	b := make([]byte, n)
	rand.Read(b)
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:])
}

// TestTransferSymlinkEscape: code inside plants symlinks to a host
// directory and a host file (absolute, and climbing with ".."). Large
// uploads through them land inside the sandbox, at those paths in its own
// root; the host directory and file are untouched; downloads through them
// read the sandbox's files. A daemon that wrote host-side by joining the
// path to the sandbox's root on the host would follow the links out.
func TestTransferSymlinkEscape(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{})
	hostDir := t.TempDir()
	marker, secret := hostMarker(t)
	// The links' targets exist inside too (a dangling link's directory is
	// not made), so the uploads go through them.
	d.exec(sb.ID, "mkdir -p "+hostDir+" && ln -s "+hostDir+" /workspace/dir && ln -s ../../../../../../.."+hostDir+" /workspace/rel && ln -s "+marker+" /workspace/file")

	payload, sum := randomBytes(t, 8<<20)
	paths := []string{"/workspace/dir/a.bin", "/workspace/rel/b.bin", "/workspace/file", hostDir + "/c.bin"}
	for _, p := range paths {
		if _, err := d.client.Upload(ctx, sb.ID, p, bytes.NewReader(payload), 0o644); err != nil {
			t.Errorf("upload %s: %v", p, err)
		}
	}
	if entries, _ := os.ReadDir(hostDir); len(entries) != 0 {
		t.Errorf("uploads wrote %d files into the host directory a planted symlink names", len(entries))
	}
	checkMarker(t, marker, secret)
	for _, p := range paths {
		rc, err := d.client.Download(ctx, sb.ID, p)
		if err != nil {
			t.Errorf("download %s: %v", p, err)
			continue
		}
		got, _ := io.ReadAll(rc)
		rc.Close()
		if !bytes.Equal(got, payload) {
			t.Errorf("download %s: %d bytes, not what was uploaded", p, len(got))
		}
	}
	// Inside: the files are at the host-looking paths of the sandbox's own
	// root, and the links stay links.
	want := strings.Repeat(sum+"\n", 3) + sum
	if got := d.exec(sb.ID, "for f in "+hostDir+"/a.bin "+hostDir+"/b.bin "+marker+" "+hostDir+"/c.bin; do sha256sum $f | cut -d' ' -f1; done"); got != want {
		t.Errorf("inside the sandbox the uploads hash to\n%s\nwant\n%s", got, want)
	}
	if got := d.exec(sb.ID, "readlink /workspace/file"); got != marker {
		t.Errorf("the link at /workspace/file now reads %q", got)
	}
}

// TestTransferOwnership: what an upload makes is root's inside the
// sandbox (as the streamed path made it), with the mode asked for or, for
// a file replaced without one, the old file's mode; the directories it
// makes are root's with 0755. On the host the file has the ids of
// anything else root writes in the sandbox.
func TestTransferOwnership(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{})
	payload, _ := randomBytes(t, 4<<20)
	up := func(p string, mode os.FileMode) {
		t.Helper()
		if _, err := d.client.Upload(ctx, sb.ID, p, bytes.NewReader(payload), mode); err != nil {
			t.Fatalf("upload %s: %v", p, err)
		}
	}
	up("/workspace/new/deep/a.bin", 0)
	up("/workspace/new/b.bin", 0o750)
	d.exec(sb.ID, "echo old > /workspace/kept && chown 1000:1000 /workspace/kept && chmod 0604 /workspace/kept")
	up("/workspace/kept", 0)
	got := d.exec(sb.ID, "stat -c '%n %u:%g %a' /workspace/new /workspace/new/deep /workspace/new/deep/a.bin /workspace/new/b.bin /workspace/kept")
	want := strings.Join([]string{
		"/workspace/new 0:0 755",
		"/workspace/new/deep 0:0 755",
		"/workspace/new/deep/a.bin 0:0 644",
		"/workspace/new/b.bin 0:0 750",
		"/workspace/kept 0:0 604",
	}, "\n")
	if got != want {
		t.Errorf("inside the sandbox:\n%s\nwant\n%s", got, want)
	}
	// A user of the sandbox reads root's new file and cannot write it.
	res, err := d.client.Exec(ctx, sb.ID, sdk.ExecRequest{User: "1000:1000",
		Shell: "id -u; cat /workspace/new/deep/a.bin >/dev/null && echo read; echo x >> /workspace/new/deep/a.bin && echo wrote; true"})
	if err != nil || strings.TrimSpace(res.Stdout) != "1000\nread" {
		t.Errorf("uid 1000 and root's 0644 upload: %+v, %v; want it read and not written", res, err)
	}
	// Host side: the upload has the ids of what root makes in the sandbox.
	d.exec(sb.ID, "echo made > /workspace/new/made")
	hostIDs := func(p string) string {
		t.Helper()
		fi, err := os.Stat(filepath.Join(d.dataDir, "sandboxes", sb.ID, "rootfs", p))
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		return fmt.Sprintf("%d:%d", st.Uid, st.Gid)
	}
	if up, made := hostIDs("workspace/new/deep/a.bin"), hostIDs("workspace/new/made"); up != made {
		t.Errorf("on the host the upload is %s, a file root made inside %s", up, made)
	}
}

// TestTransferDiskLimit: an upload larger than the sandbox's disk fails
// with 507 NO_SPACE and leaves nothing behind (no partial file, no
// temporary file), the space is free again, and a smaller one then fits.
func TestTransferDiskLimit(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{DiskMiB: 32})
	big, _ := randomBytes(t, 64<<20)
	_, err := d.client.Upload(ctx, sb.ID, "/workspace/big.bin", bytes.NewReader(big), 0o644)
	var apiErr *sdk.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != sdk.CodeNoSpace || apiErr.StatusCode != 507 {
		t.Fatalf("64 MiB upload into a 32 MiB disk: %v, want 507 NO_SPACE", err)
	}
	if got := d.exec(sb.ID, "ls -A /workspace"); got != "" {
		t.Errorf("the failed upload left %q in /workspace", got)
	}
	small, sum := randomBytes(t, 16<<20)
	if _, err := d.client.Upload(ctx, sb.ID, "/workspace/small.bin", bytes.NewReader(small), 0o644); err != nil {
		t.Fatalf("16 MiB upload after the failed one: %v", err)
	}
	if got := d.exec(sb.ID, "sha256sum /workspace/small.bin | cut -d' ' -f1"); got != sum {
		t.Errorf("small.bin hashes to %s inside, want %s", got, sum)
	}
}

// TestTransferTeamQuota: a team under a disk quota uploads into its
// sandbox up to that sandbox's disk and no further; another team's key
// neither reads nor writes the sandbox's files.
func TestTransferTeamQuota(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	scopes := []string{sdk.ScopeSandboxesWrite, sdk.ScopeSandboxesRead, sdk.ScopeExec}
	a, _ := d.teamKey("quota-a", sdk.Quotas{DiskMiB: 40}, scopes...)
	b, _ := d.teamKey("quota-b", sdk.Quotas{}, scopes...)
	sb, err := a.CreateSandbox(ctx, sdk.CreateSandboxRequest{DiskMiB: 32})
	if err != nil {
		t.Fatal(err)
	}
	d.created[sb.ID] = true
	if _, err := a.CreateSandbox(ctx, sdk.CreateSandboxRequest{DiskMiB: 32}); errCode(err) == "" {
		t.Fatal("a second 32 MiB disk fit a 40 MiB quota")
	}
	big, _ := randomBytes(t, 48<<20)
	if _, err := a.Upload(ctx, sb.ID, "/workspace/big.bin", bytes.NewReader(big), 0o644); errCode(err) != sdk.CodeNoSpace {
		t.Errorf("48 MiB upload past the quota-sized disk: %v, want NO_SPACE", err)
	}
	data, _ := randomBytes(t, 2<<20)
	if _, err := a.Upload(ctx, sb.ID, "/workspace/ok.bin", bytes.NewReader(data), 0o644); err != nil {
		t.Fatalf("team a's upload: %v", err)
	}
	if _, err := b.Upload(ctx, sb.ID, "/workspace/other.bin", bytes.NewReader(data), 0o644); !sdk.IsNotFound(err) {
		t.Errorf("another team's upload: %v, want not found", err)
	}
	if _, err := b.Download(ctx, sb.ID, "/workspace/ok.bin"); !sdk.IsNotFound(err) {
		t.Errorf("another team's download: %v, want not found", err)
	}
	if got := d.exec(sb.ID, "ls /workspace"); got != "ok.bin" {
		t.Errorf("/workspace holds %q, want only ok.bin", got)
	}
}
