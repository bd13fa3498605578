package integration

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/sdk"
)

// sbx runs the CLI against the daemon and returns stdout and the exit code.
func (d *daemon) sbx(stdin string, args ...string) (string, string, int) {
	d.t.Helper()
	cmd := exec.Command(sbxBin, args...)
	cmd.Env = append(os.Environ(), "SBX_HOST=http://"+d.addr, "SBX_TOKEN="+d.token)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		d.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func TestCLI(t *testing.T) {
	d := startDaemon(t)
	out, stderr, code := d.sbx("", "create", "cli", "--label", "k=v", "--env", "A=1", "--memory", "128", "-o", "json")
	if code != 0 {
		t.Fatalf("create: %d %s", code, stderr)
	}
	var sb sdk.Sandbox
	if err := json.Unmarshal([]byte(out), &sb); err != nil || sb.Name != "cli" || sb.MemoryMiB != 128 || sb.Labels["k"] != "v" {
		t.Fatalf("create -o json = %q, %v", out, err)
	}
	d.created[sb.ID] = true

	out, _, code = d.sbx("", "exec", "cli", "--", "sh", "-c", "echo $A; exit 7")
	if code != 7 || out != "1\n" {
		t.Errorf("exec: code %d, out %q", code, out)
	}
	out, _, code = d.sbx("piped", "exec", "-i", "cli", "--", "cat")
	if code != 0 || out != "piped" {
		t.Errorf("exec -i: code %d, out %q", code, out)
	}

	local := filepath.Join(t.TempDir(), "in.txt")
	os.WriteFile(local, []byte("via cp"), 0o644)
	if _, stderr, code := d.sbx("", "cp", local, "cli:/workspace/in.txt"); code != 0 {
		t.Fatalf("cp up: %s", stderr)
	}
	back := filepath.Join(t.TempDir(), "back.txt")
	if _, stderr, code := d.sbx("", "cp", "cli:/workspace/in.txt", back); code != 0 {
		t.Fatalf("cp down: %s", stderr)
	}
	if b, _ := os.ReadFile(back); string(b) != "via cp" {
		t.Errorf("cp round trip = %q", b)
	}

	out, _, code = d.sbx("", "ls", "-o", "json")
	var list []sdk.Sandbox
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 1 {
		t.Errorf("ls -o json = %q", out)
	}
	if out, _, _ := d.sbx("", "ls"); !strings.Contains(out, "cli") || !strings.Contains(out, "started") {
		t.Errorf("ls table = %q", out)
	}
	// Every list prints an empty JSON array, not null, when it has nothing.
	for _, list := range [][]string{{"secret", "ls"}, {"pool", "ls"}, {"volume", "ls"}} {
		if out, stderr, code := d.sbx("", append(list, "-o", "json")...); code != 0 || strings.TrimSpace(out) != "[]" {
			t.Errorf("%v -o json with none = %q (%s), want []", list, out, stderr)
		}
	}

	// Import a rootfs directory and run a sandbox from it.
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "bin"), 0o755)
	bb, _ := os.ReadFile("/bin/busybox")
	os.WriteFile(filepath.Join(root, "bin", "busybox"), bb, 0o755)
	os.Symlink("busybox", filepath.Join(root, "bin", "sh"))
	os.Symlink("busybox", filepath.Join(root, "bin", "cat"))
	os.WriteFile(filepath.Join(root, "hello"), []byte("from dir"), 0o644)
	if _, stderr, code := d.sbx("", "image", "import", "mydir", root); code != 0 {
		t.Fatalf("image import: %s", stderr)
	}
	out, stderr, code = d.sbx("", "create", "fromdir", "--image", "mydir", "-o", "json")
	if code != 0 {
		t.Fatalf("create from imported image: %s", stderr)
	}
	json.Unmarshal([]byte(out), &sb)
	d.created[sb.ID] = true
	if out, _, code := d.sbx("", "exec", "fromdir", "--", "cat", "/hello"); code != 0 || out != "from dir" {
		t.Errorf("exec in imported image: %d %q", code, out)
	}

	// Errors name the problem and exit 1.
	_, stderr, code = d.sbx("", "get", "missing")
	if code != 1 || !strings.Contains(stderr, "not found") {
		t.Errorf("get missing: %d %q", code, stderr)
	}
	if _, _, code := d.sbx("", "stop", "cli"); code != 0 {
		t.Errorf("stop: %d", code)
	}
	if _, stderr, code := d.sbx("", "rm", "cli", "fromdir"); code != 0 {
		t.Errorf("rm: %s", stderr)
	}
}
