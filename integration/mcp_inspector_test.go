package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/sdk"
)

// inspectorDir holds the official MCP inspector, pinned in its
// package-lock.json and installed by scripts/npm-install.sh.
const inspectorDir = "testdata/mcp-inspector"

// TestMCPInspector: the official MCP inspector's CLI mode lists sbx's tools
// and calls them over Streamable HTTP (/mcp with the key as bearer) and
// over stdio (`sbx mcp`), and sees a missing sandbox as a tool error.
func TestMCPInspector(t *testing.T) {
	bin := filepath.Join(inspectorDir, "node_modules", ".bin", "mcp-inspector")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the MCP inspector is not installed in integration/%s: run scripts/npm-install.sh (%v)", inspectorDir, err)
	}
	d := startDaemon(t)
	key, err := d.client.CreateKey(context.Background(), sdk.CreateKeyRequest{Scopes: []string{sdk.ScopeSandboxesRead, sdk.ScopeSandboxesWrite, sdk.ScopeExec}})
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string][]string{
		"http":  {d.baseURL() + "/mcp", "--transport", "http", "--header", "Authorization: Bearer " + key.Key}, // --header takes what follows
		"stdio": {"-e", "SBX_HOST=" + d.baseURL(), "-e", "SBX_TOKEN=" + key.Key, sbxBin, "mcp"},
	}
	for name, target := range targets {
		t.Run(name, func(t *testing.T) {
			inspect := func(args ...string) map[string]any {
				t.Helper()
				cmd := exec.Command(bin, append(append([]string{"--cli"}, target...), args...)...)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("mcp-inspector %v: %v\n%s%s", args, err, out, stderr.Bytes())
				}
				var v map[string]any
				if err := json.Unmarshal(out, &v); err != nil {
					t.Fatalf("mcp-inspector %v: not JSON: %v\n%s", args, err, out)
				}
				return v
			}
			list, _ := json.Marshal(inspect("--method", "tools/list"))
			for _, tool := range []string{`"name":"sandbox_get_or_create"`, `"name":"command_run"`, `"name":"process_output"`, `"name":"desktop_screenshot"`} {
				if !strings.Contains(string(list), tool) {
					t.Errorf("tools/list lacks %s", tool)
				}
			}
			sb := "insp-" + name
			res, _ := json.Marshal(inspect("--method", "tools/call", "--tool-name", "sandbox_get_or_create", "--tool-arg", "name="+sb))
			if !strings.Contains(string(res), `\"created\": true`) {
				t.Errorf("sandbox_get_or_create: %s", res)
			}
			res, _ = json.Marshal(inspect("--method", "tools/call", "--tool-name", "command_run", "--tool-arg", "sandbox="+sb, "--tool-arg", "shell=echo inspected"))
			if !strings.Contains(string(res), `exit code: 0`) || !strings.Contains(string(res), `inspected`) {
				t.Errorf("command_run: %s", res)
			}
			res, _ = json.Marshal(inspect("--method", "tools/call", "--tool-name", "sandbox_get", "--tool-arg", "sandbox=ghost"))
			if !strings.Contains(string(res), `"isError":true`) || !strings.Contains(string(res), "SANDBOX_NOT_FOUND") {
				t.Errorf("sandbox_get of a missing sandbox: %s", res)
			}
		})
	}
}
