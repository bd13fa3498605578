package integration

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sbxhq/sbx/sdk"
)

// mcpHTTP opens an MCP session with d's /mcp, authenticated with key.
func mcpHTTP(t *testing.T, d *daemon, key string) *gomcp.ClientSession {
	t.Helper()
	return mcpHTTPVersion(t, d, key, "")
}

// mcpHTTPVersion is mcpHTTP asking for protocol version (""; the Go
// SDK's latest).
func mcpHTTPVersion(t *testing.T, d *daemon, key, version string) *gomcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: bearerKey{key: key, next: d.httpClient().Transport}}
	cs, err := gomcp.NewClient(&gomcp.Implementation{Name: "sbx-test"}, nil).Connect(context.Background(),
		&gomcp.StreamableClientTransport{Endpoint: d.baseURL() + "/mcp", HTTPClient: hc}, &gomcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect to /mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// mcpStdio runs `sbx mcp` as a client of d with key, as an MCP client would.
func mcpStdio(t *testing.T, d *daemon, key string) *gomcp.ClientSession {
	t.Helper()
	cmd := exec.Command(sbxBin, "mcp")
	cmd.Env = append(os.Environ(), "SBX_HOST="+d.baseURL(), "SBX_TOKEN="+key)
	cmd.Stderr = os.Stderr
	cs, err := gomcp.NewClient(&gomcp.Implementation{Name: "sbx-test"}, nil).Connect(context.Background(), &gomcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("start sbx mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type bearerKey struct {
	key  string
	next http.RoundTripper
}

func (b bearerKey) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	next := b.next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(r)
}

// mcpToolText calls a tool and returns its text and whether it is an error;
// a failure of the protocol itself fails the test.
func mcpToolText(t *testing.T, cs *gomcp.ClientSession, name string, args map[string]any) (string, *gomcp.CallToolResult) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &gomcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*gomcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res
}

// mcpTool calls a tool that must succeed and returns its text.
func mcpTool(t *testing.T, cs *gomcp.ClientSession, name string, args map[string]any, want ...string) string {
	t.Helper()
	out, res := mcpToolText(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s %v: tool error %s", name, args, out)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s %v: %q lacks %q", name, args, out, w)
		}
	}
	return out
}

// mcpToolFails calls a tool that must fail with a tool error holding want.
func mcpToolFails(t *testing.T, cs *gomcp.ClientSession, name string, args map[string]any, want string) {
	t.Helper()
	out, res := mcpToolText(t, cs, name, args)
	if !res.IsError || !strings.Contains(out, want) {
		t.Errorf("%s %v: error %v %q, want a tool error with %q", name, args, res.IsError, out, want)
	}
}

// bareRepoTar makes a bare git repository on the host with files in its
// first commit and returns it as a tar for UploadTar.
func bareRepoTar(t *testing.T, files map[string]string) *bytes.Buffer {
	t.Helper()
	dir := t.TempDir()
	work, bare := filepath.Join(dir, "work"), filepath.Join(dir, "repo.git")
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main", work)
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(work, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("-C", work, "add", ".")
	git("-C", work, "commit", "-q", "-m", "first")
	git("clone", "-q", "--bare", work, bare)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.AddFS(os.DirFS(bare).(fs.FS)); err != nil {
		t.Fatal(err)
	}
	tw.Close()
	return &buf
}

// cancelEndsCommand: cancelling a call (over HTTP: closing its request;
// over stdio: notifications/cancelled) ends the command it runs.
func cancelEndsCommand(t *testing.T, cs *gomcp.ClientSession) {
	t.Helper()
	cctx, cancel := context.WithCancel(context.Background())
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(cctx, &gomcp.CallToolParams{Name: "command_run", Arguments: map[string]any{"sandbox": "m1", "cmd": []string{"sleep", "300"}}})
		called <- err
	}()
	sleeping := func() bool {
		time.Sleep(200 * time.Millisecond)
		return strings.Contains(mcpTool(t, cs, "command_run", map[string]any{"sandbox": "m1", "cmd": []string{"ps"}}), "sleep 300")
	}
	waitFor(t, 30*time.Second, "sleep 300 to run", sleeping)
	cancel()
	if err := <-called; err == nil {
		t.Error("a cancelled call returned no error")
	}
	waitFor(t, 30*time.Second, "the cancelled call's sleep 300 to end", func() bool { return !sleeping() })
}

// TestMCP drives every tool of the MCP server against a real daemon over
// Streamable HTTP with a team key, then the stdio server (`sbx mcp`), and
// checks the gate: no key, a read-only key, a revoked key.
func TestMCP(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	if _, err := d.client.CreateTeam(ctx, sdk.CreateTeamRequest{ID: "acme"}); err != nil {
		t.Fatal(err)
	}
	key := func(scopes ...string) *sdk.CreatedKey {
		k, err := d.client.CreateKey(ctx, sdk.CreateKeyRequest{Team: "acme", Scopes: scopes})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	rw := key(sdk.ScopeSandboxesRead, sdk.ScopeSandboxesWrite, sdk.ScopeExec)
	cs := mcpHTTP(t, d, rw.Key)
	// The SDK's client asks for 2026-07-28 (server/discover, no session);
	// a client of 2025-11-25 gets it through initialize.
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Errorf("negotiated protocol %q, want 2026-07-28", v)
	}
	old := mcpHTTPVersion(t, d, rw.Key, "2025-11-25")
	if v := old.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Errorf("a 2025-11-25 client negotiated %q", v)
	}
	mcpToolFails(t, old, "sandbox_get", map[string]any{"sandbox": "ghost"}, "SANDBOX_NOT_FOUND")

	t.Run("sandboxes", func(t *testing.T) {
		mcpTool(t, cs, "sandbox_create", map[string]any{"name": "m1", "labels": map[string]string{"task": "mcp"}, "autoStopSeconds": 600, "cpu": 1, "memoryMiB": 256}, `"name": "m1"`, `"autoStopSeconds": 600`, `"memoryMiB": 256`)
		mcpTool(t, cs, "sandbox_get_or_create", map[string]any{"name": "m1"}, `"created": false`)
		mcpTool(t, cs, "sandbox_get_or_create", map[string]any{"name": "m2", "ephemeral": false}, `"created": true`)
		out := mcpTool(t, cs, "sandbox_list", map[string]any{"labels": map[string]string{"task": "mcp"}}, `"name": "m1"`)
		if strings.Contains(out, `"m2"`) {
			t.Errorf("the label filter let m2 through: %s", out)
		}
		mcpTool(t, cs, "sandbox_get", map[string]any{"sandbox": "m1"}, `"state": "started"`)
		mcpToolFails(t, cs, "sandbox_get", map[string]any{"sandbox": "ghost"}, "SANDBOX_NOT_FOUND (HTTP 404)")
		mcpToolFails(t, cs, "sandbox_get", map[string]any{"sandbox": 7}, "sandbox")               // a bad argument
		mcpToolFails(t, cs, "sandbox_create", map[string]any{"name": "m3", "cpu": "lots"}, "cpu") // wrong type
		mcpTool(t, cs, "sandbox_pause", map[string]any{"sandbox": "m2"}, `"state": "paused"`)
		mcpTool(t, cs, "sandbox_resume", map[string]any{"sandbox": "m2"}, `"state": "started"`)
		mcpTool(t, cs, "sandbox_stop", map[string]any{"sandbox": "m2"}, `"state": "stopped"`)
		mcpTool(t, cs, "sandbox_start", map[string]any{"sandbox": "m2"}, `"state": "started"`)
		for _, idle := range []string{"sandbox_stop", "sandbox_pause"} { // as the idle policy would
			mcpTool(t, cs, idle, map[string]any{"sandbox": "m2"})
			mcpTool(t, cs, "sandbox_get_or_create", map[string]any{"name": "m2"}, `"created": false`, `"state": "started"`)
		}
		mcpTool(t, cs, "command_run", map[string]any{"sandbox": "m2", "shell": "echo kept > /workspace/k"}, "exit code: 0")
		mcpTool(t, cs, "sandbox_snapshot", map[string]any{"sandbox": "m2", "name": "snap-m2"}, `"name": "snap-m2"`)
		mcpTool(t, cs, "sandbox_fork", map[string]any{"sandbox": "m2", "name": "m2-fork"}, `"name": "m2-fork"`)
		mcpTool(t, cs, "command_run", map[string]any{"sandbox": "m2-fork", "cmd": []string{"cat", "/workspace/k"}}, "kept")
		mcpTool(t, cs, "sandbox_delete", map[string]any{"sandbox": "m2-fork"}, "deleted m2-fork")
		mcpTool(t, cs, "port_expose", map[string]any{"sandbox": "m1", "port": 8080}, "http://"+d.addr+"/v1/sandboxes/", "/ports/8080/")
	})

	t.Run("commands", func(t *testing.T) {
		mcpTool(t, cs, "command_run", map[string]any{"sandbox": "m1", "shell": "echo out; echo err >&2; exit 3"}, "exit code: 3", "--- stdout ---\nout", "--- stderr ---\nerr")
		// An output larger than the budget: cut, with a note saying so.
		out := mcpTool(t, cs, "command_run", map[string]any{"sandbox": "m1", "shell": "yes x | head -c 50000"},
			"[truncated at maxBytes 20000: the last 30000 bytes of stdout are left out")
		if n := strings.Count(out, "x\n"); n != 10000 {
			t.Errorf("%d lines of output within the budget, want 10000", n)
		}
		mcpTool(t, cs, "command_run", map[string]any{"sandbox": "m1", "shell": "sleep 5", "timeoutSeconds": 0.5}, "(timed out)")

		cancelEndsCommand(t, cs)

		// Longer than a client's 60 s call: started, polled, awaited.
		mcpTool(t, cs, "process_start", map[string]any{"sandbox": "m1", "id": "long", "shell": "echo begun; sleep 61; echo ended"}, `"id": "long"`)
		out = mcpTool(t, cs, "process_output", map[string]any{"sandbox": "m1", "process": "long"}, "[still running]")
		for strings.Contains(out, "[still running]") {
			mcpTool(t, cs, "process_wait", map[string]any{"sandbox": "m1", "process": "long", "timeoutSeconds": 20})
			out = mcpTool(t, cs, "process_output", map[string]any{"sandbox": "m1", "process": "long"})
		}
		if !strings.Contains(out, "begun\nended\n") || !strings.Contains(out, "[exited with code 0]") {
			t.Errorf("the long process's output: %q", out)
		}

		// Output past the budget pages on with since and skip.
		mcpTool(t, cs, "process_start", map[string]any{"sandbox": "m1", "id": "big", "shell": "seq 1 3000"})
		mcpTool(t, cs, "process_wait", map[string]any{"sandbox": "m1", "process": "big"}, `"state": "exited"`)
		out = mcpTool(t, cs, "process_output", map[string]any{"sandbox": "m1", "process": "big", "maxBytes": 6000}, "continue with since 0 and skip 6000")
		rest := mcpTool(t, cs, "process_output", map[string]any{"sandbox": "m1", "process": "big", "skip": 6000}, "[nextSince ")
		if got := strings.SplitN(out, "\n[", 2)[0] + strings.SplitN(rest, "\n[", 2)[0]; !strings.HasPrefix(got, "1\n2\n") || !strings.HasSuffix(got, "2999\n3000") {
			t.Errorf("the two pages do not make the whole output: %q … %q", got[:20], got[len(got)-20:])
		}

		mcpTool(t, cs, "process_start", map[string]any{"sandbox": "m1", "id": "cat", "cmd": []string{"cat"}})
		mcpTool(t, cs, "process_write_stdin", map[string]any{"sandbox": "m1", "process": "cat", "data": "fed\n", "close": true}, "stdin closed: true")
		mcpTool(t, cs, "process_wait", map[string]any{"sandbox": "m1", "process": "cat"}, `"exitCode": 0`)
		mcpTool(t, cs, "process_output", map[string]any{"sandbox": "m1", "process": "cat"}, "fed\n")

		mcpTool(t, cs, "process_start", map[string]any{"sandbox": "m1", "id": "sleeper", "cmd": []string{"sleep", "600"}})
		mcpTool(t, cs, "process_signal", map[string]any{"sandbox": "m1", "process": "sleeper", "signal": "KILL"})
		mcpTool(t, cs, "process_wait", map[string]any{"sandbox": "m1", "process": "sleeper"}, `"signal": "SIGKILL"`)
		mcpToolFails(t, cs, "process_output", map[string]any{"sandbox": "m1", "process": "nope"}, "PROCESS_NOT_FOUND")

		mcpTool(t, cs, "code_run", map[string]any{"sandbox": "m1", "language": "sh", "code": "echo from code"}, "--- stdout ---\nfrom code")
		// The base image has no interpreter a context can keep (bash, python).
		mcpToolFails(t, cs, "code_context_create", map[string]any{"sandbox": "m1", "language": "python"}, "(HTTP ")
	})

	t.Run("files", func(t *testing.T) {
		mcpTool(t, cs, "file_write", map[string]any{"sandbox": "m1", "path": "/workspace/a.txt", "content": "hello world\nhello again\n"}, "wrote 24 bytes")
		mcpTool(t, cs, "file_read", map[string]any{"sandbox": "m1", "path": "/workspace/a.txt"}, "hello world\nhello again\n")
		out := mcpTool(t, cs, "file_read", map[string]any{"sandbox": "m1", "path": "/workspace/a.txt", "offset": 6, "limit": 5}, "continue with offset 11")
		if !strings.HasPrefix(out, "world\n[truncated") {
			t.Errorf("a window of the file: %q", out)
		}
		mcpToolFails(t, cs, "file_edit", map[string]any{"sandbox": "m1", "path": "/workspace/a.txt", "old": "hello", "new": "bye"}, "occurs 2 times")
		mcpToolFails(t, cs, "file_edit", map[string]any{"sandbox": "m1", "path": "/workspace/a.txt", "old": "absent", "new": "bye"}, "not found")
		mcpTool(t, cs, "file_edit", map[string]any{"sandbox": "m1", "path": "/workspace/a.txt", "old": "hello world", "new": "hello sbx"}, "replaced 1")
		mcpTool(t, cs, "file_list", map[string]any{"sandbox": "m1", "path": "/workspace"}, `"name": "a.txt"`)
		mcpTool(t, cs, "file_search", map[string]any{"sandbox": "m1", "path": "/workspace", "pattern": "sbx"}, "/workspace/a.txt:1:hello sbx")
		mcpTool(t, cs, "file_search", map[string]any{"sandbox": "m1", "path": "/workspace", "pattern": "nowhere"}, "no matches")
		mcpTool(t, cs, "file_search", map[string]any{"sandbox": "m1", "path": "/workspace", "pattern": "^hel+o s", "regex": true}, "/workspace/a.txt:1:hello sbx")
		mcpToolFails(t, cs, "file_search", map[string]any{"sandbox": "m1", "path": "/workspace", "pattern": "(", "regex": true}, "not a regular expression")
		mcpTool(t, cs, "file_move", map[string]any{"sandbox": "m1", "from": "/workspace/a.txt", "to": "/workspace/b.txt"}, "b.txt")
		res, err := cs.ReadResource(ctx, &gomcp.ReadResourceParams{URI: "sbx://m1/workspace/b.txt"})
		if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "hello sbx\nhello again\n" {
			t.Errorf("resource sbx://m1/workspace/b.txt: %v %+v", err, res)
		}
		mcpTool(t, cs, "file_delete", map[string]any{"sandbox": "m1", "path": "/workspace/b.txt"}, "deleted")
		mcpToolFails(t, cs, "file_read", map[string]any{"sandbox": "m1", "path": "/workspace/b.txt"}, "NOT_FOUND")
		if _, err := cs.ReadResource(ctx, &gomcp.ReadResourceParams{URI: "sbx://ghost/etc/hostname"}); err == nil {
			t.Error("a missing sandbox's file resource read")
		}
		res, err = cs.ReadResource(ctx, &gomcp.ReadResourceParams{URI: "sbx-events://m1"})
		if err != nil || !strings.Contains(res.Contents[0].Text, `"state": "started"`) {
			t.Errorf("events resource: %v %+v", err, res)
		}
		mcpTool(t, cs, "sandbox_create", map[string]any{"name": "logger", "entrypoint": []string{"sh", "-c", "echo main says hi; exec sleep 3600"}})
		waitFor(t, 30*time.Second, "the main process's output in sbx-logs://logger", func() bool {
			res, err := cs.ReadResource(ctx, &gomcp.ReadResourceParams{URI: "sbx-logs://logger"})
			if err != nil {
				t.Fatalf("logs resource: %v", err)
			}
			return strings.Contains(res.Contents[0].Text, "main says hi\n")
		})
		mcpTool(t, cs, "sandbox_delete", map[string]any{"sandbox": "logger"})
	})

	t.Run("git", func(t *testing.T) {
		if _, err := d.client.UploadTar(ctx, "m1", "/srv/repo.git", bareRepoTar(t, map[string]string{"README": "one\n"})); err != nil {
			t.Fatal(err)
		}
		mcpTool(t, cs, "git_clone", map[string]any{"sandbox": "m1", "url": "file:///srv/repo.git", "path": "/workspace/repo"}, `"branch": "main"`)
		mcpTool(t, cs, "file_write", map[string]any{"sandbox": "m1", "path": "/workspace/repo/README", "content": "two\n"})
		mcpTool(t, cs, "git_status", map[string]any{"sandbox": "m1", "path": "/workspace/repo"}, `"path": "README"`, `"clean": false`)
		// busybox has no git program: git_diff says so instead of failing obscurely.
		mcpToolFails(t, cs, "git_diff", map[string]any{"sandbox": "m1", "path": "/workspace/repo"}, "needs the git program")
		mcpTool(t, cs, "git_commit", map[string]any{"sandbox": "m1", "path": "/workspace/repo", "message": "second", "addAll": true, "authorName": "a", "authorEmail": "a@example.com"}, `"message": "second`)
		mcpTool(t, cs, "git_status", map[string]any{"sandbox": "m1", "path": "/workspace/repo"}, `"clean": true`)
	})

	t.Run("debian", func(t *testing.T) {
		// The debian image has bash (a context keeps its state) and git.
		f, err := os.Open(debianImageTar(t))
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.client.ImportImage(ctx, "debian", f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		// Imported by the operator: a team key starts sandboxes from it too.
		mcpTool(t, cs, "sandbox_create", map[string]any{"name": "deb", "image": "debian"})
		out := mcpTool(t, cs, "code_context_create", map[string]any{"sandbox": "deb", "language": "bash"}, `"language": "bash"`)
		var c sdk.Context
		if err := json.Unmarshal([]byte(out), &c); err != nil {
			t.Fatalf("code_context_create: %v: %s", err, out)
		}
		mcpTool(t, cs, "code_run", map[string]any{"sandbox": "deb", "context": c.ID, "code": "X=41"})
		mcpTool(t, cs, "code_run", map[string]any{"sandbox": "deb", "context": c.ID, "code": "echo $((X+1))"}, "--- stdout ---\n42")
		if _, err := d.client.UploadTar(ctx, "deb", "/srv/repo.git", bareRepoTar(t, map[string]string{"README": "one\n"})); err != nil {
			t.Fatal(err)
		}
		mcpTool(t, cs, "git_clone", map[string]any{"sandbox": "deb", "url": "file:///srv/repo.git", "path": "/workspace/repo"})
		mcpTool(t, cs, "file_edit", map[string]any{"sandbox": "deb", "path": "/workspace/repo/README", "old": "one", "new": "two"})
		mcpTool(t, cs, "git_diff", map[string]any{"sandbox": "deb", "path": "/workspace/repo"}, "-one\n+two\n")
		mcpTool(t, cs, "sandbox_delete", map[string]any{"sandbox": "deb"})
	})

	t.Run("desktop", func(t *testing.T) {
		// The base image has no desktop: each tool is refused with sbx's code.
		mcpToolFails(t, cs, "desktop_start", map[string]any{"sandbox": "m1"}, "DESKTOP_")
		for name, args := range map[string]map[string]any{
			"desktop_screenshot": {}, "desktop_click": {"x": 1, "y": 1}, "desktop_type": {"text": "a"},
			"desktop_key": {"key": "Return"}, "desktop_scroll": {"direction": "down"},
		} {
			args["sandbox"] = "m1"
			mcpToolFails(t, cs, name, args, "DESKTOP_NOT_RUNNING")
		}
	})

	t.Run("gate", func(t *testing.T) {
		resp, err := http.Post(d.baseURL()+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("/mcp without a key: %d, want 401", resp.StatusCode)
		}
		ro := mcpHTTP(t, d, key(sdk.ScopeSandboxesRead).Key)
		mcpTool(t, ro, "sandbox_list", map[string]any{}, `"name": "m1"`)
		mcpToolFails(t, ro, "sandbox_create", map[string]any{"name": "nope"}, "MISSING_SCOPE (HTTP 403)")
		mcpToolFails(t, ro, "command_run", map[string]any{"sandbox": "m1", "cmd": []string{"true"}}, "MISSING_SCOPE")
		mcpToolFails(t, ro, "file_write", map[string]any{"sandbox": "m1", "path": "/x", "content": "x"}, "MISSING_SCOPE")

		if _, err := d.client.CreateTeam(ctx, sdk.CreateTeamRequest{ID: "rival"}); err != nil {
			t.Fatal(err)
		}
		rival, err := d.client.CreateKey(ctx, sdk.CreateKeyRequest{Team: "rival", Scopes: []string{sdk.ScopeSandboxesRead, sdk.ScopeExec}})
		if err != nil {
			t.Fatal(err)
		}
		mcpToolFails(t, mcpHTTP(t, d, rival.Key), "command_run", map[string]any{"sandbox": "m1", "cmd": []string{"true"}}, "SANDBOX_NOT_FOUND")

		doomed := key(sdk.ScopeSandboxesRead)
		s := mcpHTTP(t, d, doomed.Key)
		mcpTool(t, s, "sandbox_get", map[string]any{"sandbox": "m1"})
		if _, err := d.client.RevokeKey(ctx, doomed.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CallTool(ctx, &gomcp.CallToolParams{Name: "sandbox_get", Arguments: map[string]any{"sandbox": "m1"}}); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
			t.Errorf("a call with a revoked key: %v, want 401 Unauthorized", err)
		}

		// Tool calls are API requests of the caller's key: audited as such.
		var created, refused bool
		for after := int64(0); ; {
			entries, err := d.client.Audit(ctx, "acme", after, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) == 0 {
				break
			}
			for _, e := range entries {
				created = created || e.KeyID == rw.ID && e.Method == "POST" && e.Path == "/v1/sandboxes" && e.Status == 201
				refused = refused || e.KeyID != rw.ID && e.Method == "POST" && e.Path == "/v1/sandboxes" && e.Status == 403
				after = e.Seq
			}
		}
		if !created || !refused {
			t.Errorf("audit log: create by the MCP key %v, refusal of the read-only key %v", created, refused)
		}
	})

	t.Run("stdio", func(t *testing.T) {
		st := mcpStdio(t, d, rw.Key)
		if v := st.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			t.Errorf("stdio negotiated protocol %q, want 2026-07-28", v)
		}
		tools, err := st.ListTools(ctx, nil)
		if err != nil || len(tools.Tools) < 35 {
			t.Fatalf("tools over stdio: %v, %d", err, len(tools.Tools))
		}
		mcpTool(t, st, "sandbox_get_or_create", map[string]any{"name": "m1"}, `"created": false`)
		mcpTool(t, st, "command_run", map[string]any{"sandbox": "m1", "cmd": []string{"echo", "over stdio"}}, "over stdio")

		// Files between the client's machine and the sandbox: stdio only.
		local := t.TempDir()
		if err := os.WriteFile(filepath.Join(local, "in.txt"), []byte("from the client\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		mcpTool(t, st, "file_upload", map[string]any{"sandbox": "m1", "localPath": filepath.Join(local, "in.txt"), "path": "/workspace/up/in.txt"}, "(16 bytes)")
		mcpTool(t, st, "command_run", map[string]any{"sandbox": "m1", "shell": "cat /workspace/up/in.txt; echo back > /workspace/up/out.txt"}, "from the client")
		mcpTool(t, st, "file_download", map[string]any{"sandbox": "m1", "path": "/workspace/up/out.txt", "localPath": filepath.Join(local, "out.txt")}, "(5 bytes)")
		if b, err := os.ReadFile(filepath.Join(local, "out.txt")); err != nil || string(b) != "back\n" {
			t.Errorf("downloaded file: %q %v", b, err)
		}
		mcpToolFails(t, st, "file_upload", map[string]any{"sandbox": "m1", "localPath": filepath.Join(local, "none"), "path": "/x"}, "on this machine")
		httpTools, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range httpTools.Tools {
			if tl.Name == "file_upload" || tl.Name == "file_download" {
				t.Errorf("/mcp offers %s: the daemon's files are not the caller's", tl.Name)
			}
		}
		cancelEndsCommand(t, st)
		mcpToolFails(t, st, "sandbox_get", map[string]any{"sandbox": "ghost"}, "SANDBOX_NOT_FOUND")
		mcpTool(t, st, "sandbox_delete", map[string]any{"sandbox": "m1"}, "deleted m1")
		bad := mcpStdio(t, d, "sbx_wrong")
		mcpToolFails(t, bad, "sandbox_list", map[string]any{}, "UNAUTHORIZED")
	})
}
