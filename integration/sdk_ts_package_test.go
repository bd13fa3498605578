package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTypeScriptSDKPackage packs sdks/typescript as it would be published
// (npm pack), installs the tarball into an empty project offline (from the
// npm cache scripts/npm-install.sh fills), checks what it ships, and runs
// the README's quickstart, copied from it, against a real daemon. A
// terminal script then runs twice: with the ws package (Node 20 has no
// WebSocket of its own) and, with ws removed, on Node's built-in WebSocket
// (--experimental-websocket here; built in from Node 22), ending with
// Symbol.asyncDispose, which `await using` calls.
func TestTypeScriptSDKPackage(t *testing.T) {
	dir := sdkDir(t, "typescript")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".bin", "tsc")); err != nil {
		t.Fatalf("%v: run scripts/npm-install.sh", err)
	}
	cache := os.Getenv("SBX_NPM_CACHE")
	if cache == "" {
		cache = "/var/cache/sbx/npm"
	}
	tmp := t.TempDir()
	npm := []string{"--offline", "--cache", cache, "--no-audit", "--no-fund"}
	runSuite(t, dir, os.Environ(), "npm", append([]string{"pack", "--pack-destination", tmp}, npm...)...)
	tarballs, _ := filepath.Glob(filepath.Join(tmp, "sbxhq-sdk-*.tgz"))
	if len(tarballs) != 1 {
		t.Fatalf("tarballs: %v", tarballs)
	}
	app := filepath.Join(tmp, "app")
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(app, "package.json"), []byte(`{"name": "app", "private": true, "type": "module"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	runSuite(t, app, os.Environ(), "npm", append([]string{"install", tarballs[0]}, npm...)...)

	pkg := filepath.Join(app, "node_modules", "@sbxhq", "sdk")
	for _, f := range []string{"LICENSE", "README.md", "dist/index.js", "dist/index.d.ts"} {
		if _, err := os.Stat(filepath.Join(pkg, f)); err != nil {
			t.Errorf("the package does not ship %s: %v", f, err)
		}
	}
	var meta struct {
		License, Homepage string
		Repository        struct{ URL string }
	}
	b, err := os.ReadFile(filepath.Join(pkg, "package.json"))
	if err != nil || json.Unmarshal(b, &meta) != nil {
		t.Fatalf("package.json: %v", err)
	}
	if meta.License != "Apache-2.0" || !strings.HasPrefix(meta.Homepage, "https://github.com/sbxhq/sbx") || meta.Repository.URL != "git+https://github.com/sbxhq/sbx.git" {
		t.Errorf("package.json metadata %+v", meta)
	}

	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(app, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("quickstart.mjs", firstCodeBlock(t, string(readme), "## Quickstart", "```js\n"))
	write("pty.mjs", ptyScript)
	d := startDaemon(t)
	node := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("node", args...)
		cmd.Dir, cmd.Env = app, sdkEnv(d)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("node %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if out := node("quickstart.mjs"); out != "0 42\nhi\n" {
		t.Errorf("quickstart printed %q", out)
	}
	if out := node("pty.mjs"); out != "ws: pty-ok, disposed\n" {
		t.Errorf("pty with ws printed %q", out)
	}
	if err := os.RemoveAll(filepath.Join(app, "node_modules", "ws")); err != nil {
		t.Fatal(err)
	}
	if out := node("--experimental-websocket", "--no-warnings", "pty.mjs"); out != "built-in: pty-ok, disposed\n" {
		t.Errorf("pty on the built-in WebSocket printed %q", out)
	}
}

// ptyScript types into a terminal, waits for its echo, and disposes of the
// sandbox as `await using` would.
const ptyScript = `import { Sandbox, SandboxNotFoundError } from "@sbxhq/sdk";
const sb = await Sandbox.create();
let out = "";
const term = await sb.pty.create({ onData: (b) => (out += new TextDecoder().decode(b)) });
term.write("echo pty-$((40+2))\n"); // the output, not the typed line's echo, holds pty-42
for (let i = 0; i < 400 && !out.includes("pty-42\r\n"); i++) await new Promise((r) => setTimeout(r, 50));
term.disconnect();
await sb[Symbol.asyncDispose]();
let gone = false;
try { await Sandbox.connect(sb.id); } catch (e) { gone = e instanceof SandboxNotFoundError; }
console.log((typeof WebSocket === "function" ? "built-in" : "ws") + ": " + (out.includes("pty-42\r\n") ? "pty-ok" : "no echo in " + JSON.stringify(out)) + (gone ? ", disposed" : ", still there"));
`
