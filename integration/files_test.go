package integration

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"math/rand"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

func TestUploadDownload100MiB(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{})
	const size = 100 << 20
	src := io.LimitReader(rand.New(rand.NewSource(1)), size)
	up := sha256.New()
	info, err := d.client.Upload(ctx, sb.ID, "/workspace/big.bin", io.TeeReader(src, up), 0o640)
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != size || info.Mode != "0640" {
		t.Errorf("uploaded file info = %+v", info)
	}
	rc, err := d.client.Download(ctx, sb.ID, "/workspace/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	down := sha256.New()
	n, err := io.Copy(down, rc)
	if err != nil || n != size {
		t.Fatalf("download: %d bytes, %v", n, err)
	}
	if string(up.Sum(nil)) != string(down.Sum(nil)) {
		t.Fatal("sha256 of the download differs from the upload")
	}
	// The sandbox sees the same bytes.
	res, err := d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Cmd: []string{"sha256sum", "/workspace/big.bin"}})
	if err != nil || !strings.HasPrefix(res.Stdout, hexOf(up.Sum(nil))) {
		t.Errorf("sha256sum inside = %+v, %v", res, err)
	}
}

func TestFileOperations(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{})
	c := d.client
	if _, err := c.Mkdir(ctx, sb.ID, sdk.MkdirRequest{Path: "/workspace/a/b", Parents: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Upload(ctx, sb.ID, "a/b/f.txt", strings.NewReader("x"), 0o644); err != nil {
		t.Fatal("relative path from workdir:", err)
	}
	list, err := c.ListFiles(ctx, sb.ID, "/workspace/a/b")
	if err != nil || len(list) != 1 || list[0].Name != "f.txt" || list[0].Type != "file" {
		t.Errorf("list = %+v, %v", list, err)
	}
	if _, err := c.Move(ctx, sb.ID, sdk.MoveRequest{From: "/workspace/a/b/f.txt", To: "/workspace/g.txt"}); err != nil {
		t.Fatal(err)
	}
	st, err := c.StatFile(ctx, sb.ID, "/workspace/g.txt")
	if err != nil || st.Size != 1 {
		t.Errorf("stat = %+v, %v", st, err)
	}
	if err := c.RemoveFile(ctx, sb.ID, "/workspace/a", false); !sdk.IsConflict(err) {
		t.Errorf("remove non-empty dir without recursive: want conflict, got %v", err)
	}
	if err := c.RemoveFile(ctx, sb.ID, "/workspace/a", true); err != nil {
		t.Fatal(err)
	}
	if _, err := c.StatFile(ctx, sb.ID, "/workspace/a"); !sdk.IsNotFound(err) {
		t.Errorf("stat removed dir: want not found, got %v", err)
	}
	if _, err := c.Download(ctx, sb.ID, "/nope"); !sdk.IsNotFound(err) {
		t.Errorf("download missing: want not found, got %v", err)
	}
}

// TestPathsStayInside proves that no path given to the file API and no
// symlink made inside a sandbox reaches a host file.
func TestPathsStayInside(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{})
	hostDir := t.TempDir()
	secret := filepath.Join(hostDir, "secret")
	if err := os.WriteFile(secret, []byte("host secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Symlinks inside point at the host path and climb with "..".
	_, err := d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: "ln -s " + secret + " /workspace/abs && ln -s ../../../../../../.." + secret + " /workspace/rel && ln -s " + hostDir + " /workspace/dir"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{secret, "/workspace/abs", "/workspace/rel", "../../../../../../.." + secret, "/workspace/dir/secret"} {
		rc, err := d.client.Download(ctx, sb.ID, p)
		if err == nil {
			b, _ := io.ReadAll(rc)
			rc.Close()
			if strings.Contains(string(b), "host secret") {
				t.Errorf("download %s read the host file", p)
			}
		}
		if _, err := d.client.Upload(ctx, sb.ID, p, strings.NewReader("pwned"), 0o644); err == nil {
			// Writes may succeed, but only inside the sandbox.
			b, _ := os.ReadFile(secret)
			if string(b) != "host secret" {
				t.Fatalf("upload to %s changed the host file", p)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(hostDir, "pwned")); err == nil {
		t.Error("a file appeared in the host directory")
	}
	entries, _ := os.ReadDir(hostDir)
	if len(entries) != 1 {
		t.Errorf("host dir changed: %d entries", len(entries))
	}
}

// TestPlantedSocketSymlink: code inside replaces the agent's socket with a
// symlink to a host socket. A daemon that dials afresh (here: after a
// restart) must refuse it instead of connecting to the host socket.
func TestPlantedSocketSymlink(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{})
	hostSock := filepath.Join(t.TempDir(), "host.sock")
	ln, err := net.Listen("unix", hostSock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- struct{}{}
			c.Close()
		}
	}()
	_, err = d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: "rm -f /.sbx/run/agent.sock && ln -s " + hostSock + " /.sbx/run/agent.sock"})
	if err != nil {
		t.Fatal(err)
	}
	d.kill9()
	d.start()
	got, err := d.client.GetSandbox(ctx, sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State == sdk.StateStarted {
		if _, err := d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Cmd: []string{"true"}}); err == nil {
			t.Error("exec went through a planted symlink socket")
		}
	}
	select {
	case <-accepted:
		t.Fatal("the daemon connected to a host socket through a symlink planted in the sandbox")
	default:
	}
}

// TestFilesPeerBehaviour: what users of E2B, Daytona and Cloudflare rely
// on, through the daemon into a real sandbox: special files answer 400,
// parents are made by default, uploads write through symlinks and show in
// a watch by their final path, listings go deeper, directories copy both
// ways as tar, and a tar that would escape is refused whole.
func TestFilesPeerBehaviour(t *testing.T) {
	for _, class := range []string{"container", "gvisor"} {
		t.Run(class, func(t *testing.T) { testFilesPeerBehaviour(t, class) })
	}
}

func testFilesPeerBehaviour(t *testing.T, class string) {
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{Class: class})
	c := d.client
	sh := func(script string) string {
		t.Helper()
		res, err := c.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: script})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("%s: %+v, %v", script, res, err)
		}
		return res.Stdout
	}
	// The agent's own socket, a fifo and a device.
	sh(`mkdir -p /workspace/sp && mkfifo /workspace/sp/fifo && ln -s /dev/zero /workspace/sp/zero`)
	for _, p := range []string{"/.sbx/run/agent.sock", "/workspace/sp/fifo", "/workspace/sp/zero"} {
		_, err := c.Download(ctx, sb.ID, p)
		if !sdk.IsInvalid(err) || !strings.Contains(err.Error(), "NOT_A_REGULAR_FILE") {
			t.Errorf("download %s: want 400 NOT_A_REGULAR_FILE, got %v", p, err)
		}
	}

	// Parents by default; WithoutParents refuses.
	if _, err := c.Upload(ctx, sb.ID, "/workspace/new/dir/f.txt", strings.NewReader("f"), 0); err != nil {
		t.Fatal("upload into missing directories:", err)
	}
	if _, err := c.Upload(ctx, sb.ID, "/workspace/none/g.txt", strings.NewReader("g"), 0, sdk.WithoutParents()); !sdk.IsNotFound(err) {
		t.Errorf("WithoutParents: want 404, got %v", err)
	}

	// A watch sees uploads by their final path, never a temporary name.
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	w, err := c.Watch(wctx, sb.ID, sdk.WatchOptions{Path: "/workspace", Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, body := range []string{"one", "two"} {
		if _, err := c.Upload(ctx, sb.ID, "/workspace/new/dir/w.txt", strings.NewReader(body), 0); err != nil {
			t.Fatal(err)
		}
	}
	var events []string
	for len(events) < 3 {
		ev, err := w.Next()
		if err != nil {
			t.Fatalf("watch after %v: %v", events, err)
		}
		if ev.Type != "heartbeat" && ev.Type != "ready" {
			events = append(events, ev.Type+" "+ev.Path)
		}
	}
	if got := strings.Join(events, ", "); got != "create /workspace/new/dir/w.txt, write /workspace/new/dir/w.txt, write /workspace/new/dir/w.txt" {
		t.Errorf("watch events: %s", got)
	}

	// Through a symlink: the target is written, the link stays.
	sh(`ln -s new/dir/f.txt /workspace/link`)
	if _, err := c.Upload(ctx, sb.ID, "/workspace/link", strings.NewReader("via link"), 0); err != nil {
		t.Fatal(err)
	}
	if out := sh(`cat /workspace/new/dir/f.txt; test -L /workspace/link && echo " link"`); out != "via link link\n" {
		t.Errorf("upload through a symlink: %q", out)
	}

	// Deeper listings.
	list, err := c.ListFiles(ctx, sb.ID, "/workspace/new", sdk.WithDepth(3))
	if err != nil || len(list) != 3 || list[1].Path != "/workspace/new/dir/f.txt" {
		t.Errorf("depth 3: %+v, %v", list, err)
	}

	// Directories both ways.
	local := t.TempDir()
	os.MkdirAll(filepath.Join(local, "src", "pkg"), 0o755)
	os.WriteFile(filepath.Join(local, "src", "pkg", "a.go"), []byte("package pkg"), 0o600)
	os.Symlink("pkg/a.go", filepath.Join(local, "src", "link"))
	if _, err := c.UploadDir(ctx, sb.ID, filepath.Join(local, "src"), "/workspace/up/src"); err != nil {
		t.Fatal(err)
	}
	if out := sh(`cat /workspace/up/src/pkg/a.go; stat -c ' %a' /workspace/up/src/pkg/a.go; readlink /workspace/up/src/link`); out != "package pkg 600\npkg/a.go\n" {
		t.Errorf("uploaded tree: %q", out)
	}
	if err := c.DownloadDir(ctx, sb.ID, "/workspace/up", filepath.Join(local, "back")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(local, "back", "src", "link")); err != nil || string(b) != "package pkg" {
		t.Errorf("downloaded tree: %q, %v", b, err)
	}
	// A tar that climbs out is refused whole, with a clear code.
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "ok.txt", Mode: 0o644, Typeflag: tar.TypeReg})
	tw.WriteHeader(&tar.Header{Name: "../../etc/evil", Mode: 0o644, Typeflag: tar.TypeReg})
	tw.Close()
	_, err = c.UploadTar(ctx, sb.ID, "/workspace/up", &buf)
	if !sdk.IsInvalid(err) || !strings.Contains(err.Error(), "TAR_UNSAFE_PATH") {
		t.Errorf("escaping tar: want 400 TAR_UNSAFE_PATH, got %v", err)
	}
	if out := sh(`ls /workspace/up; test -e /etc/evil && echo evil; true`); out != "src\n" {
		t.Errorf("after a refused tar: %q", out)
	}

	// The CLI: sbx cp -r both ways, as cp -r places directories.
	if _, stderr, code := d.sbx("", "cp", "-r", filepath.Join(local, "src"), sb.ID+":/workspace/"); code != 0 {
		t.Fatalf("cp -r in: %s", stderr)
	}
	if _, stderr, code := d.sbx("", "cp", "-r", sb.ID+":/workspace/src", filepath.Join(local, "cli")); code != 0 {
		t.Fatalf("cp -r out: %s", stderr)
	}
	if b, err := os.ReadFile(filepath.Join(local, "cli", "pkg", "a.go")); err != nil || string(b) != "package pkg" {
		t.Errorf("cp -r round trip: %q, %v", b, err)
	}
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}
