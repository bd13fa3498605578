package image

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
)

func TestEnsureBase(t *testing.T) {
	m, rec, dataDir := newTestManager(t)
	if err := checkStatic("/bin/busybox"); err != nil {
		t.Skipf("host has no static busybox: %v", err)
	}
	ctx := context.Background()
	if err := m.EnsureBase(ctx); err != nil {
		t.Fatal(err)
	}
	img, err := rec.GetImage(ctx, "base")
	if err != nil {
		t.Fatal(err)
	}
	if img.Source != "base" || len(img.Layers) != 1 || img.ID != img.Layers[0] || len(img.Config.Cmd) == 0 {
		t.Fatalf("record %+v", img)
	}
	root := m.LayerDirs(img.Layers)[0]

	for link, want := range map[string]string{"bin/sh": "busybox", "bin/ls": "busybox", "usr/bin/env": "/bin/busybox"} {
		if got, err := os.Readlink(filepath.Join(root, link)); err != nil || got != want {
			t.Errorf("%s -> %q, %v; want %q", link, got, err, want)
		}
	}
	bb, _ := os.Stat("/bin/busybox")
	if fi, err := os.Stat(filepath.Join(root, "bin/busybox")); err != nil || fi.Size() != bb.Size() || fi.Mode().Perm() != 0o755 {
		t.Errorf("bin/busybox: %v, %v", fi, err)
	}
	for dir, perm := range map[string]os.FileMode{"tmp": 0o777 | os.ModeSticky, "root": 0o700, "workspace": 0o755, "dev": 0o755, "proc": 0o555, "sys": 0o555} {
		fi, err := os.Stat(filepath.Join(root, dir))
		if err != nil || !fi.IsDir() || fi.Mode()&(os.ModePerm|os.ModeSticky) != perm {
			t.Errorf("%s: %v, %v; want dir %v", dir, fi, err, perm)
		}
	}
	for f, want := range map[string]string{"etc/passwd": "root:x:0:0:", "etc/group": "root:x:0:", "etc/hosts": "127.0.0.1\tlocalhost"} {
		if b, err := os.ReadFile(filepath.Join(root, f)); err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s = %q, %v", f, b, err)
		}
	}

	// Runnable: a shell in a chroot of the layer works and sees its own /etc.
	cmd := exec.Command("/bin/sh", "-c", "cd /workspace && echo ok && head -n1 /etc/passwd && env true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root}
	cmd.Env = img.Config.Env
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "ok\nroot:x:0:0:root:/root:/bin/sh\n" {
		t.Fatalf("chroot shell: %q, %v", out, err)
	}

	// Idempotent, and deterministic across data dirs.
	puts := rec.puts
	if err := m.EnsureBase(ctx); err != nil || rec.puts != puts {
		t.Fatalf("second EnsureBase: %v, %d writes", err, rec.puts-puts)
	}
	m2, rec2, _ := newTestManager(t)
	if err := m2.EnsureBase(ctx); err != nil {
		t.Fatal(err)
	}
	if img2, _ := rec2.GetImage(ctx, "base"); img2.ID != img.ID {
		t.Errorf("base ID differs between builds: %s vs %s", img2.ID, img.ID)
	}
	assertEmptyDirs(t, filepath.Join(dataDir, "tmp"))
}

func TestEnsureBaseNeedsStaticBusybox(t *testing.T) {
	m, _, dataDir := newTestManager(t)
	paths := []string{filepath.Join(dataDir, "no-busybox")}
	if checkStatic("/bin/sh") != nil { // on Debian, dash: dynamically linked
		paths = append(paths, "/bin/sh")
	}
	for _, path := range paths {
		m.busybox = path
		err := m.EnsureBase(context.Background())
		if errdefs.CodeOf(err) != "BUSYBOX_MISSING" || !strings.Contains(err.Error(), "apt-get install busybox-static") {
			t.Errorf("%s: got %v", path, err)
		}
	}
}
