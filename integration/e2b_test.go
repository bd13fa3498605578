package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// e2bDir holds the pinned E2B SDKs (package.json + lock) and the program
// written with them.
const e2bDir = "testdata/e2b"

func requireE2BSDK(t *testing.T) {
	t.Helper()
	for _, p := range []string{"node_modules/e2b/package.json", "node_modules/@e2b/code-interpreter/package.json"} {
		if _, err := os.Stat(filepath.Join(e2bDir, p)); err != nil {
			t.Fatalf("E2B's SDK is not installed in integration/%s: run scripts/npm-install.sh (%v)", e2bDir, err)
		}
	}
}

// TestE2B shares one daemon with the python image (importing it is most
// of the time) between the E2B SDK flow, E2B's bad input and sbx's own
// exec as another user.
func TestE2B(t *testing.T) {
	requireE2BSDK(t)
	d := startDaemon(t, "--preview-domain", e2bPreviewDomain)
	importPython(t, d)
	t.Run("ExecAsUser", func(t *testing.T) { testExecAsUser(t, d) })
	t.Run("BadInput", func(t *testing.T) { testE2BBadInput(t, d) })
	t.Run("SDKFlow", func(t *testing.T) { testE2BSDKFlow(t, d, "flow.mjs") })
	t.Run("SDKFixes", func(t *testing.T) { testE2BSDKFlow(t, d, "fixes.mjs") })
	t.Run("SDKSurface", func(t *testing.T) { testE2BSDKFlow(t, d, "surface.mjs") })
}

// TestE2BStore: Volume's file methods, Secret.* and signed file URLs
// through E2B's SDK (store.mjs), on the base image (E2B template "plain"),
// with another team's key, a symlink out of a volume and a revoked key.
func TestE2BStore(t *testing.T) {
	requireE2BSDK(t)
	d := startDaemon(t, "--preview-domain", e2bPreviewDomain, "--e2b-template", "plain=base")
	testE2BSDKFlow(t, d, "store.mjs")
}

// e2bPreviewDomain is TestE2B's preview domain: fixes.mjs resolves every
// name below it to the daemon with a resolver of its own.
const e2bPreviewDomain = "sbx.test"

// testE2BSDKFlow runs a program of integration/testdata/e2b, written with
// E2B's official SDKs, against the daemon: every SDK call it makes asserts
// its result.
func testE2BSDKFlow(t *testing.T, d *daemon, script string) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script)
	cmd.Dir = e2bDir
	cmd.Env = append(os.Environ(),
		"E2B_API_URL="+d.baseURL()+"/e2b",
		"E2B_SANDBOX_URL="+d.baseURL()+"/e2b/sandbox",
		"E2B_VOLUME_API_URL="+d.baseURL()+"/e2b",
		"E2B_API_KEY="+d.token,
		"SBX_PREVIEW_DOMAIN="+e2bPreviewDomain,
		"SBX_ADDR="+d.addr,
	)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	t.Logf("%s (%s):\n%s", script, time.Since(start).Round(time.Millisecond), out.String())
	if err != nil || !strings.Contains(out.String(), "ALL OK") {
		t.Fatalf("%s failed: %v", script, err)
	}
	// Sandboxes the flow killed are gone from sbx too.
	waitFor(t, time.Minute, "the sandboxes the flow killed to be deleted", func() bool {
		list, err := d.client.ListSandboxes(context.Background(), sdk.ListOptions{})
		return err == nil && len(list) == 0
	})
}

// testE2BBadInput: malformed requests get 4xx in E2B's formats, never 500.
func testE2BBadInput(t *testing.T, d *daemon) {
	do := func(method, path string, hdr map[string]string, body string) (int, string) {
		req, _ := http.NewRequest(method, d.baseURL()+path, strings.NewReader(body))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := d.httpClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	key := map[string]string{"X-API-KEY": d.token, "Content-Type": "application/json"}
	if code, body := do("POST", "/e2b/sandboxes", map[string]string{"X-API-KEY": "wrong"}, `{}`); code != 401 || !strings.Contains(body, `"code":401`) {
		t.Errorf("wrong key: %d %s", code, body)
	}
	if code, body := do("POST", "/e2b/v2/sandboxes", key, `{"templateID":"nope"}`); code != 404 || !strings.Contains(body, "template") {
		t.Errorf("unknown template: %d %s", code, body)
	}
	if code, body := do("POST", "/e2b/v2/sandboxes", key, `{"templateID":`); code != 400 {
		t.Errorf("malformed JSON: %d %s", code, body)
	}
	if code, body := do("GET", "/e2b/sandboxes/ghost", key, ``); code != 404 {
		t.Errorf("unknown sandbox: %d %s", code, body)
	}
	// envd without a valid access token, and a malformed RPC with one.
	rpc := map[string]string{"Content-Type": "application/json", "E2b-Sandbox-Id": "ghost", "E2b-Sandbox-Port": "49983"}
	if code, body := do("POST", "/e2b/sandbox/filesystem.Filesystem/Stat", rpc, `{"path":"/"}`); code != 401 {
		t.Errorf("RPC without token: %d %s", code, body)
	}
	code, body := do("POST", "/e2b/v2/sandboxes", key, `{"templateID":"base","timeout":60}`)
	if code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	var created struct{ SandboxID, EnvdAccessToken string }
	json.Unmarshal([]byte(body), &created)
	defer d.client.DeleteSandbox(context.Background(), created.SandboxID, true)
	rpc["E2b-Sandbox-Id"], rpc["X-Access-Token"] = created.SandboxID, created.EnvdAccessToken
	if code, body := do("POST", "/e2b/sandbox/filesystem.Filesystem/Stat", rpc, `{"path":`); code != 400 || !strings.Contains(body, "invalid_argument") {
		t.Errorf("malformed RPC: %d %s", code, body)
	}
	if code, body := do("POST", "/e2b/sandbox/filesystem.Filesystem/Stat", rpc, `{"path":"/nope"}`); code != 404 || !strings.Contains(body, "not_found") {
		t.Errorf("Stat of a missing path: %d %s", code, body)
	}
	rpc["X-Access-Token"] = created.EnvdAccessToken + "x"
	if code, body := do("POST", "/e2b/sandbox/filesystem.Filesystem/Stat", rpc, `{"path":"/"}`); code != 401 {
		t.Errorf("RPC with a forged token: %d %s", code, body)
	}
}

// testExecAsUser: sbx's own exec, processes and sessions run as another
// account of the sandbox with the user field; an unknown user is 400
// UNKNOWN_USER.
func testExecAsUser(t *testing.T, d *daemon) {
	sb := d.create(sdk.CreateSandboxRequest{Image: "python"})
	defer d.client.DeleteSandbox(context.Background(), sb.ID, true)
	ctx := context.Background()
	res, err := d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: "id -un; id -u; id -g; echo $HOME", User: "user"})
	if err != nil || res.Stdout != "user\n1000\n1000\n/home/user\n" {
		t.Fatalf("exec as user: %+v %v", res, err)
	}
	res, err = d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: "id -u; id -g", User: "1234:5678"})
	if err != nil || res.Stdout != "1234\n5678\n" {
		t.Fatalf("exec as 1234:5678: %+v %v", res, err)
	}
	res, err = d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: "touch /root/x", User: "user"})
	if err != nil || res.ExitCode == 0 {
		t.Fatalf("user could write /root: %+v %v", res, err)
	}
	sess, err := d.client.CreateSession(ctx, sb.ID, sdk.CreateSessionRequest{User: "user"})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := d.client.SessionExec(ctx, sb.ID, sess.ID, sdk.SessionExecRequest{Command: "id -un; echo $HOME"}); err != nil || r.Stdout != "user\n/home/user\n" {
		t.Fatalf("session as user: %+v %v", r, err)
	}
	proc, err := d.client.StartProcess(ctx, sb.ID, sdk.StartProcessRequest{Shell: "id -u > /tmp/uid", User: "user"})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := d.client.WaitProcess(ctx, sb.ID, proc.ID, time.Minute); err != nil || p.ExitCode == nil || *p.ExitCode != 0 {
		t.Fatalf("process as user: %+v %v", p, err)
	}
	if res, err = d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: "cat /tmp/uid; stat -c %u /tmp/uid"}); err != nil || res.Stdout != "1000\n1000\n" {
		t.Fatalf("process as user wrote %+v %v", res, err)
	}
	_, err = d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: "true", User: "nobody-here"})
	if ae, ok := err.(*sdk.APIError); !ok || ae.StatusCode != 400 || ae.Code != sdk.CodeUnknownUser {
		t.Fatalf("unknown user: want UNKNOWN_USER, got %v", err)
	}
}

// TestE2BNoInternet: a sandbox made through E2B's REST API with
// allow_internet_access false (what Sandbox.create({allowInternetAccess:
// false}) sends) cannot reach a server outside the host, and one with
// network.allowOut reaches only what it lists; a sandbox without them
// reaches both; updateNetwork changes a running sandbox's policy. The layer
// used to drop the options.
func TestE2BNoInternet(t *testing.T) {
	out := newOutside(t)
	d := startDaemon(t, "--e2b-template", "plain=base", "--egress-allow-private", out.subnet.String()) // the stand-in server is on a private address
	urlA, urlB := "http://"+out.a.String()+":8080/", "http://"+out.b.String()+":8080/"
	create := func(body string) string {
		t.Helper()
		req, _ := http.NewRequest("POST", d.baseURL()+"/e2b/v2/sandboxes", strings.NewReader(body))
		req.Header.Set("X-API-KEY", d.token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := d.httpClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got struct{ SandboxID string }
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != 201 {
			t.Fatalf("create %s: %d %v", body, resp.StatusCode, err)
		}
		return got.SandboxID
	}
	open := create(`{"templateID":"plain"}`)
	d.mustFetch(open, urlA, "A")
	// updateNetwork (PUT …/network, what Sandbox.updateNetwork sends) cuts
	// a running sandbox off and lets it out again.
	updateNetwork := func(id, body string) {
		t.Helper()
		req, _ := http.NewRequest("PUT", d.baseURL()+"/e2b/sandboxes/"+id+"/network", strings.NewReader(body))
		req.Header.Set("X-API-KEY", d.token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := d.httpClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 204 {
			t.Fatalf("updateNetwork %s: %d", body, resp.StatusCode)
		}
	}
	updateNetwork(open, `{"allow_internet_access":false}`)
	d.mustBeRefused(open, urlA)
	updateNetwork(open, `{}`)
	d.mustFetch(open, urlA, "A")

	cut := create(`{"templateID":"plain","allow_internet_access":false}`)
	d.mustBeRefused(cut, urlA)
	d.mustBeRefused(cut, urlB)

	listed := create(`{"templateID":"plain","network":{"denyOut":["0.0.0.0/0"],"allowOut":["` + out.a.String() + `"]}}`)
	d.mustFetch(listed, urlA, "A")
	d.mustBeRefused(listed, urlB)
}
