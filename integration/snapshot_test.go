package integration

import (
	"archive/tar"
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// Filesystem snapshots and forks of class container (runc); class gvisor
// shares the code (see gvisor_test.go for its memory).

// TestSnapshotContainer snapshots a running container sandbox after every
// kind of change overlayfs records and starts new sandboxes from it.
func TestSnapshotContainer(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	src := d.create(sdk.CreateSandboxRequest{Name: "src", Env: map[string]string{"FROM": "src"}})
	d.exec("src", `echo hello > /workspace/a.txt
		rm /bin/vi                          # a whiteout over the image
		rm -rf /usr/bin && mkdir /usr/bin && echo only > /usr/bin/only   # an opaque directory
		mkdir -p /workspace/d && ln /workspace/a.txt /workspace/d/hard && ln -s a.txt /workspace/link
		(i=0; while :; do i=$((i+1)); echo $i > /workspace/count.tmp; mv /workspace/count.tmp /workspace/count; sleep 0.05; done > /dev/null 2>&1 &)`)

	snap, err := d.client.CreateSnapshot(ctx, "src", sdk.CreateSnapshotRequest{Name: "snap-1"})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Sandbox != src.ID || snap.Class != "container" || snap.Memory || snap.Image != "base" || snap.ExpiresAt != nil {
		t.Errorf("snapshot = %+v", snap)
	}
	if got, _ := d.client.GetSandbox(ctx, "src"); got.State != sdk.StateStarted {
		t.Errorf("source %s after the snapshot, want started (thawed)", got.State)
	}
	n := d.count("src")
	waitFor(t, 30*time.Second, "the source's counter after the freeze", func() bool { return d.count("src") > n })

	copy := d.create(sdk.CreateSandboxRequest{Name: "copy", Snapshot: "snap-1", Labels: map[string]string{"k": "v"}})
	if copy.Snapshot != "snap-1" || copy.Image != "base" || copy.Env["FROM"] != "src" || copy.Labels["k"] != "v" {
		t.Errorf("copy = %+v", copy)
	}
	want := "hello\nhello\nhello\nonly\nabsent\n2"
	check := `cat /workspace/a.txt /workspace/d/hard /workspace/link; ls /usr/bin; ls /bin/vi 2>/dev/null || echo absent; stat -c %h /workspace/a.txt`
	if got := d.exec("copy", check); got != want {
		t.Errorf("copy sees:\n%s\nwant:\n%s", got, want)
	}
	if got := d.exec("copy", "ps | grep -c '[s]leep 0.05' || true"); got != "0" {
		t.Errorf("a filesystem snapshot brought processes along: %s", got)
	}
	// Independent both ways.
	d.exec("copy", "echo copy > /workspace/a.txt")
	d.exec("src", "echo src > /workspace/b.txt")
	if got := d.exec("src", "cat /workspace/a.txt"); got != "hello" {
		t.Errorf("source sees the copy's write: %q", got)
	}
	if got := d.exec("copy", "ls /workspace/b.txt 2>/dev/null || echo absent"); got != "absent" {
		t.Errorf("copy sees the source's later write: %q", got)
	}

	// Listing, duplicates, bad input.
	list, err := d.client.ListSnapshots(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "snap-1" {
		t.Fatalf("list = %v, %v", list, err)
	}
	_, err = d.client.CreateSnapshot(ctx, "src", sdk.CreateSnapshotRequest{Name: "snap-1"})
	if apiCode(err) != "SNAPSHOT_EXISTS" {
		t.Errorf("duplicate: %v", err)
	}
	for body, code := range map[string]string{
		`{"name": "Bad Name"}`:                      "INVALID_SNAPSHOT_NAME",
		`{"name": "m", "includeMemory": true}`:      "MEMORY_UNSUPPORTED",
		`{"name": "e", "expiresInSeconds": -1}`:     "INVALID_EXPIRY",
		`{"name": "x", "unknownField": 1}`:          "",
		`{"name": "y", "expiresInSeconds": "soon"}`: "",
	} {
		status, eb := d.call("POST", "/v1/sandboxes/src/snapshots", body)
		if status != http.StatusBadRequest || (code != "" && string(eb.Code) != code) {
			t.Errorf("%s: %d %+v, want 400 %s", body, status, eb, code)
		}
	}
	if status, eb := d.call("POST", "/v1/sandboxes", `{"image": "base", "snapshot": "snap-1"}`); status != http.StatusBadRequest || eb.Code != "IMAGE_AND_SNAPSHOT" {
		t.Errorf("image and snapshot: %d %+v", status, eb)
	}
	if status, eb := d.call("POST", "/v1/sandboxes", `{"snapshot": "nope"}`); status != http.StatusNotFound || eb.Code != "SNAPSHOT_NOT_FOUND" {
		t.Errorf("missing snapshot: %d %+v", status, eb)
	}
	if list, _ := d.client.ListSnapshots(ctx); len(list) != 1 {
		t.Errorf("bad requests left %d snapshots", len(list))
	}

	// Deleting the snapshot keeps the sandboxes made from it working.
	if err := d.client.DeleteSnapshot(ctx, "snap-1"); err != nil {
		t.Fatal(err)
	}
	if err := d.client.DeleteSnapshot(ctx, "snap-1"); apiCode(err) != "SNAPSHOT_NOT_FOUND" {
		t.Errorf("second delete: %v", err)
	}
	if _, err := d.client.StopSandbox(ctx, "copy", sdk.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.client.StartSandbox(ctx, "copy"); err != nil {
		t.Fatal(err)
	}
	if got := d.exec("copy", "cat /workspace/a.txt /usr/bin/only"); got != "copy\nonly" {
		t.Errorf("copy after the snapshot is gone: %q", got)
	}
}

// TestSnapshotExpiry: a snapshot with an expiry is deleted once it has gone
// unused that long; creating a sandbox from it starts the time again.
func TestSnapshotExpiry(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	d.create(sdk.CreateSandboxRequest{Name: "src"})
	if _, err := d.client.StopSandbox(ctx, "src", sdk.StopOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	snap, err := d.client.CreateSnapshot(ctx, "src", sdk.CreateSnapshotRequest{Name: "short", ExpiresInSeconds: 4})
	if err != nil {
		t.Fatal(err)
	}
	if snap.ExpiresAt == nil || snap.ExpiresInSeconds != 4 {
		t.Fatalf("snapshot = %+v", snap)
	}
	first := *snap.ExpiresAt
	waitFor(t, 10*time.Second, "a second to pass", func() bool { return time.Since(snap.CreatedAt) > time.Second })
	d.create(sdk.CreateSandboxRequest{Name: "user", Snapshot: "short"})
	got, err := d.client.GetSnapshot(ctx, "short")
	if err != nil {
		t.Fatal(err)
	}
	if got.ExpiresAt == nil || !got.ExpiresAt.After(first) {
		t.Errorf("expiry %v after a restore, want later than %v", got.ExpiresAt, first)
	}
	waitFor(t, 30*time.Second, "the snapshot to expire", func() bool {
		_, err := d.client.GetSnapshot(ctx, "short")
		return apiCode(err) == "SNAPSHOT_NOT_FOUND"
	})
	if got := d.exec("user", "echo ok"); got != "ok" {
		t.Errorf("a sandbox made from an expired snapshot: %q", got)
	}
}

// TestSnapshotOutlivesItsImage: removing the image a snapshot is based on
// keeps the layers the snapshot needs.
func TestSnapshotOutlivesItsImage(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "marker", Mode: 0o644, Size: 5, Typeflag: tar.TypeReg})
	tw.Write([]byte("image"))
	tw.Close()
	if _, err := d.client.ImportImage(ctx, "tiny", &buf); err != nil {
		t.Fatal(err)
	}
	// The agent needs no shell: run it from the image alone, stopped.
	d.create(sdk.CreateSandboxRequest{Name: "src", Image: "tiny"})
	if _, err := d.client.StopSandbox(ctx, "src", sdk.StopOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.client.CreateSnapshot(ctx, "src", sdk.CreateSnapshotRequest{Name: "s"}); err != nil {
		t.Fatal(err)
	}
	if err := d.client.DeleteSandbox(ctx, "src", true); err != nil {
		t.Fatal(err)
	}
	if err := d.client.RemoveImage(ctx, "tiny"); err != nil {
		t.Fatal(err)
	}
	d.create(sdk.CreateSandboxRequest{Name: "again", Snapshot: "s"})
	rc, err := d.client.Download(ctx, "again", "/marker")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var b bytes.Buffer
	b.ReadFrom(rc)
	if b.String() != "image" {
		t.Errorf("marker = %q", b.String())
	}
}

// TestForkContainer: a container fork copies the filesystem, not the
// processes, and says so.
func TestForkContainer(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	d.create(sdk.CreateSandboxRequest{Name: "p"})
	d.exec("p", "echo p > /workspace/f; (sleep 1000 > /dev/null 2>&1 &)")
	res, err := d.client.ForkSandbox(ctx, "p", sdk.ForkRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Memory || res.Note == "" || len(res.Forks) != 1 || res.Forks[0].Name != "" {
		t.Fatalf("fork = %+v", res)
	}
	kid := res.Forks[0].ID
	d.created[kid] = true
	if got := d.exec(kid, "cat /workspace/f; ps | grep -c '[s]leep 1000' || true"); got != "p\n0" {
		t.Errorf("fork sees %q, want the file and no process", got)
	}
	d.exec(kid, "echo kid > /workspace/f")
	if got := d.exec("p", "cat /workspace/f"); got != "p" {
		t.Errorf("parent sees %q", got)
	}
	for body, code := range map[string]string{`{"count": 17}`: "INVALID_COUNT", `{"count": -1}`: "INVALID_COUNT", `{"name": "Bad"}`: "INVALID_NAME"} {
		if status, eb := d.call("POST", "/v1/sandboxes/p/fork", body); status != http.StatusBadRequest || string(eb.Code) != code {
			t.Errorf("%s: %d %+v", body, status, eb)
		}
	}
	if status, eb := d.call("POST", "/v1/sandboxes/p/fork", `{"name": "p"}`); status != http.StatusConflict || eb.Code != "NAME_TAKEN" {
		t.Errorf("fork onto a taken name: %d %+v", status, eb)
	}
	if list, _ := d.client.ListSandboxes(ctx, sdk.ListOptions{}); len(list) != 2 {
		t.Errorf("%d sandboxes after failed forks, want 2", len(list))
	}
	// Container pause: frozen, then thawed.
	if sb, err := d.client.PauseSandbox(ctx, "p"); err != nil || sb.State != sdk.StatePaused {
		t.Fatalf("pause: %v, %v", sb, err)
	}
	if _, err := d.client.ResumeSandbox(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if got := d.exec("p", "ps | grep -c '[s]leep 1000'"); got != "1" {
		t.Errorf("after a container pause and resume: %s sleep processes", got)
	}
}
