package integration

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/sdk"
)

// TestExampleCodingAgent runs examples/coding-agent against a real daemon
// over /mcp and over `sbx mcp`: it clones the example's repository (a bare
// repo made here from examples/coding-agent/calc, placed in the sandbox as
// file:///srv/calc.git), sees the test fail, edits add.sh, sees it pass and
// commits; the commit and the fixed file are then read back with the SDK.
func TestExampleCodingAgent(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	bin := filepath.Join(t.TempDir(), "coding-agent")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/sbxhq/sbx/examples/coding-agent").CombinedOutput(); err != nil {
		t.Fatalf("build examples/coding-agent: %v\n%s", err, out)
	}
	files := map[string]string{}
	for _, name := range []string{"add.sh", "test.sh"} {
		b, err := os.ReadFile(filepath.Join("..", "examples", "coding-agent", "calc", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(b)
	}
	// sbx mcp is found on PATH, as an MCP client's config finds it.
	path := filepath.Dir(sbxBin) + string(os.PathListSeparator) + os.Getenv("PATH")
	for _, mode := range []string{"http", "stdio"} {
		t.Run(mode, func(t *testing.T) {
			name := "coder-" + mode
			if _, err := d.client.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: name}); err != nil {
				t.Fatal(err)
			}
			if _, err := d.client.UploadTar(ctx, name, "/srv/calc.git", bareRepoTar(t, files)); err != nil {
				t.Fatal(err)
			}
			args := []string{"-repo", "file:///srv/calc.git", "-sandbox", name}
			if mode == "stdio" {
				args = append(args, "-stdio")
			}
			cmd := exec.Command(bin, args...)
			cmd.Env = append(os.Environ(), "SBX_HOST="+d.baseURL(), "SBX_TOKEN="+d.token, "PATH="+path)
			out, err := cmd.CombinedOutput()
			t.Logf("coding-agent %s:\n%s", strings.Join(args, " "), out)
			if err != nil {
				t.Fatalf("coding-agent: %v", err)
			}
			for _, want := range []string{"FAIL: sh add.sh 2 3 printed -1, want 5", "ok: add.sh", "done: the tests pass and the fix is committed"} {
				if !strings.Contains(string(out), want) {
					t.Errorf("its output lacks %q", want)
				}
			}
			log, err := d.client.GitLog(ctx, name, sdk.GitLogRequest{Path: "/workspace/calc"})
			if err != nil || len(log) != 2 || log[0].Message != "add.sh: add instead of subtracting\n" && log[0].Message != "add.sh: add instead of subtracting" {
				t.Errorf("git log: %v %+v", err, log)
			}
			r, err := d.client.Download(ctx, name, "/workspace/calc/add.sh")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(r)
			r.Close()
			if !strings.Contains(string(b), "echo $(($1 + $2))") {
				t.Errorf("add.sh after the run:\n%s", b)
			}
		})
	}
}
