package integration

import (
	"context"
	"crypto/sha256"
	"io"
	"math/rand"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}
