package integration

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// Daytona's official TypeScript SDK (@daytonaio/sdk, pinned in
// testdata/daytona/package-lock.json) runs unchanged against sbx's Daytona
// compatibility layer: the only settings are its apiUrl and apiKey.

const daytonaDir = "testdata/daytona"

// needDaytonaSDK fails (never skips) when the pinned SDK is not installed.
func needDaytonaSDK(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(daytonaDir, "node_modules", "@daytonaio", "sdk", "package.json")); err != nil {
		t.Fatalf("Daytona's SDK is not installed in %s: run scripts/npm-install.sh (%v)", daytonaDir, err)
	}
}

// runDaytonaProgram runs a node program of testdata/daytona against d and
// returns its output; a failure or a hang fails the test with the output.
// A program that does not exit by itself (the SDK's socket.io connection
// keeping it alive) is a hang.
func runDaytonaProgram(t *testing.T, d *daemon, program string, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", program)
	cmd.Dir = daytonaDir
	cmd.Env = append(os.Environ(), "DAYTONA_API_URL="+d.baseURL()+"/daytona/api", "DAYTONA_API_KEY="+d.token)
	cmd.Env = append(cmd.Env, env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node %s: %v (after %s)\n%s", program, err, time.Since(start).Round(time.Millisecond), out)
	}
	t.Logf("node %s took %s", program, time.Since(start).Round(time.Millisecond))
	return string(out)
}

func TestDaytonaSDKFlow(t *testing.T) {
	needDaytonaSDK(t)
	d := startDaemon(t)
	importPython(t, d)
	bare, _ := seedRepo(t) // git_test.go
	out := runDaytonaProgram(t, d, "flow.mjs", "DAYTONA_GIT_REPO="+bare)
	for _, c := range []string{"create default", "create with labels, env, intervals", "get by id and name",
		"list with labels and cursor pages", "executeCommand", "sessions sync and async with logs", "files",
		"codeRun", "preview link with token", "signed preview url", "code interpreter", "info, env, activity, resize", "pause, fork, snapshot", "pty", "git", "labels and intervals", "stop and start keep files",
		"archive and start restore files", "unsupported Dockerfile is a 400", "auto-pause, ttl, reconnect a terminal", "ephemeral, networkBlockAll", "delete", "done"} {
		if !strings.Contains(out, "ok "+c+"\n") && !(c == "done" && strings.Contains(out, "\ndone\n")) {
			t.Errorf("case %q did not pass:\n%s", c, out)
		}
	}
}

// Bad input through the compat routes gets Daytona-shaped 4xx answers and
// makes nothing: never a 500, never a half-made sandbox.
func TestDaytonaBadInput(t *testing.T) {
	d := startDaemon(t)
	base := d.baseURL() + "/daytona"
	do := func(method, path, body string, auth bool) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if auth {
			req.Header.Set("Authorization", "Bearer "+d.token)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := d.httpClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var m map[string]any
		json.Unmarshal(b, &m)
		return resp.StatusCode, m
	}
	cases := []struct {
		name, method, path, body string
		auth                     bool
		status                   int
		code                     string
	}{
		{"no key", "GET", "/api/sandbox", "", false, 401, "UNAUTHORIZED"},
		{"malformed JSON", "POST", "/api/sandbox", "{", true, 400, "INVALID_JSON"},
		{"multi-stage Dockerfile", "POST", "/api/sandbox", `{"buildInfo":{"dockerfileContent":"FROM base AS a\nFROM base\nRUN true\n"}}`, true, 400, "DOCKERFILE_UNSUPPORTED"},
		{"Dockerfile with build context", "POST", "/api/sandbox", `{"buildInfo":{"dockerfileContent":"FROM base\nCOPY x /x\n","contextHashes":["h"]}}`, true, 400, "DOCKERFILE_UNSUPPORTED"},
		{"unknown image", "POST", "/api/sandbox", `{"buildInfo":{"dockerfileContent":"FROM nope:1\n"}}`, true, 400, "IMAGE_NOT_FOUND"},
		{"gpu", "POST", "/api/sandbox", `{"gpu":1}`, true, 400, "FEATURE_UNSUPPORTED"},
		{"volume subpath", "POST", "/api/sandbox", `{"volumes":[{"volumeId":"v","mountPath":"/v","subpath":"s"}]}`, true, 400, "FEATURE_UNSUPPORTED"},
		{"unknown volume", "POST", "/api/sandbox", `{"volumes":[{"volumeId":"nope","mountPath":"/v"}]}`, true, 404, "VOLUME_NOT_FOUND"},
		{"snapshot without an image", "POST", "/api/snapshots", `{"name":"s"}`, true, 400, "INVALID_PARAMETER"},
		{"snapshot with resources", "POST", "/api/snapshots", `{"name":"s","imageName":"base","cpu":2}`, true, 400, "FEATURE_UNSUPPORTED"},
		{"unserved method", "GET", "/api/object-storage/push-access", "", true, 400, "FEATURE_UNSUPPORTED"},
		{"negative interval", "POST", "/api/sandbox", `{"autoStopInterval":-5}`, true, 400, "INVALID_PARAMETER"},
		{"absurd cpu", "POST", "/api/sandbox", `{"cpu":100000}`, true, 400, "INVALID_CPU"},
		{"unknown sandbox", "GET", "/api/sandbox/nope", "", true, 404, "SANDBOX_NOT_FOUND"},
		{"bad cursor", "GET", "/api/sandbox?cursor=x", "", true, 400, "INVALID_PARAMETER"},
		{"bad interval", "POST", "/api/sandbox/nope/autostop/abc", "", true, 400, "INVALID_PARAMETER"},
		{"toolbox of unknown sandbox", "POST", "/toolbox/nope/process/execute", `{"command":"true"}`, true, 404, "SANDBOX_NOT_FOUND"},
		{"unknown route", "GET", "/api/nothing", "", true, 404, "ROUTE_NOT_FOUND"},
	}
	for _, c := range cases {
		status, body := do(c.method, c.path, c.body, c.auth)
		if status != c.status || body["code"] != c.code || body["message"] == "" || body["statusCode"] != float64(c.status) {
			t.Errorf("%s: got %d %v, want %d with code %s and Daytona's error body", c.name, status, body, c.status, c.code)
		}
	}
	list, err := d.client.ListSandboxes(context.Background(), sdk.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 0 {
		t.Errorf("bad input made sandboxes: %+v", list)
	}

	// The toolbox of a real sandbox: bad input is a 4xx from the layer or
	// the agent, and the sandbox is as it was.
	sb := d.create(sdk.CreateSandboxRequest{Name: "bad"})
	tb := "/toolbox/" + sb.ID
	for _, c := range []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"empty command", "POST", tb + "/process/execute", `{"command":""}`, 400, "INVALID_COMMAND"},
		{"negative timeout", "POST", tb + "/process/execute", `{"command":"true","timeout":-1}`, 400, "INVALID_PARAMETER"},
		{"file info without path", "GET", tb + "/files/info", "", 400, "INVALID_PATH"},
		{"missing file", "GET", tb + "/files/info?path=/nope", "", 404, "FILE_NOT_FOUND"},
		{"bad folder mode", "POST", tb + "/files/folder?path=/x&mode=9z", "", 400, "INVALID_MODE"},
		{"upload not multipart", "POST", tb + "/files/bulk-upload", `{}`, 400, "INVALID_PARAMETER"},
		{"download nothing", "POST", tb + "/files/bulk-download", `{"paths":[]}`, 400, "INVALID_PATH"},
		{"chown with a flag", "POST", tb + "/files/permissions?path=/tmp&owner=-R", "", 400, "UNKNOWN_USER"},
		{"session without id", "POST", tb + "/process/session", `{}`, 400, "INVALID_ID"},
		{"exec in no session", "POST", tb + "/process/session/none/exec", `{"command":"true"}`, 404, "SESSION_NOT_FOUND"},
		{"command of no session", "GET", tb + "/process/session/none/command/cmd-1", "", 404, "SESSION_NOT_FOUND"},
		{"input to no session", "POST", tb + "/process/session/none/command/cmd-1/input", `{"data":"x"}`, 404, "SESSION_NOT_FOUND"},
		{"pty without id", "GET", tb + "/process/pty/create-connect", "", 400, "INVALID_ID"},
		{"pty too wide", "GET", tb + "/process/pty/create-connect?id=p&cols=99999", "", 400, "INVALID_SIZE"},
		{"clone at a commit", "POST", tb + "/git/clone", `{"url":"file:///x","path":"x","commit_id":"abc"}`, 400, "FEATURE_UNSUPPORTED"},
		{"status outside a repository", "GET", tb + "/git/status?path=/tmp", "", 404, "GIT_REPO_NOT_FOUND"},
		{"codeRun without python3 in the image", "POST", tb + "/process/code-run", `{"code":"1","argv":["a"]}`, 400, "LANGUAGE_NOT_AVAILABLE"},
		{"codeRun in cobol", "POST", tb + "/process/code-run", `{"code":"1","language":"cobol"}`, 400, "UNKNOWN_LANGUAGE"},
		{"negative interval", "POST", "/api/sandbox/" + sb.ID + "/autostop/-5", "", 400, "INVALID_PARAMETER"},
		{"preview port out of range", "GET", "/api/sandbox/" + sb.ID + "/ports/70000/preview-url", "", 400, "INVALID_PORT"},
		{"archive while started", "POST", "/api/sandbox/" + sb.ID + "/archive", "", 409, "SANDBOX_NOT_STOPPED"},
	} {
		status, body := do(c.method, c.path, c.body, true)
		if status != c.status || body["code"] != c.code || body["message"] == "" {
			t.Errorf("%s: got %d %v, want %d %s", c.name, status, body, c.status, c.code)
		}
	}
	after, err := d.client.GetSandbox(context.Background(), sb.ID)
	if err != nil || after.State != sdk.StateStarted {
		t.Errorf("after bad toolbox input: %+v %v, want it started", after, err)
	}
	if list, _ := d.client.ListSandboxes(context.Background(), sdk.ListOptions{}); len(list) != 1 {
		t.Errorf("bad toolbox input made sandboxes: %+v", list)
	}
}
