package gateway

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/compat/e2b"
	"github.com/sbxhq/sbx/wire"
)

// Daytona's create is the gateway's (a Sandbox object); a toolbox call on
// a stopped sandbox starts it and reaches its host by id with the hosts'
// key, where the host's own Daytona layer serves it.
func TestDaytonaThroughTheGateway(t *testing.T) {
	f := newFixture(t)
	resp, b := f.call("POST", "/daytona/api/sandbox", `{"name":"dt","labels":{"k":"v"}}`)
	var made struct {
		ID, Name, State string
		ToolboxProxyURL string `json:"toolboxProxyUrl"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(b, &made) != nil || made.Name != "dt" || made.State != "started" ||
		made.ToolboxProxyURL != f.gw.URL+"/daytona/toolbox" {
		t.Fatalf("create: %d %s", resp.StatusCode, b)
	}
	if o := f.object(made.ID); o == nil {
		t.Fatal("no Sandbox object")
	}
	if resp, b := f.call("POST", "/daytona/api/sandbox/dt/stop", ""); resp.StatusCode != 200 || !strings.Contains(string(b), `"stopped"`) {
		t.Fatalf("stop: %d %s", resp.StatusCode, b)
	}
	resp, b = f.call("POST", "/daytona/toolbox/dt/process/execute", `{"command":"true"}`)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "/daytona/toolbox/"+made.ID+"/process/execute") {
		t.Fatalf("toolbox call on the stopped sandbox: %d %s", resp.StatusCode, b)
	}
	var last seenRequest
	for _, h := range f.hosts {
		if seen := h.requests(); len(seen) > 0 {
			last = seen[len(seen)-1]
		}
	}
	if last.Auth != "Bearer "+hostToken {
		t.Fatalf("the host saw %+v", last)
	}
	resp, b = f.call("POST", "/daytona/api/sandbox/dt/fork", `{}`)
	if resp.StatusCode != 400 || !strings.Contains(string(b), "fork is not served through the cluster gateway") {
		t.Fatalf("fork: %d %s", resp.StatusCode, b)
	}
	resp, b = f.call("GET", "/daytona/toolbox/nope/files?path=/", "")
	if resp.StatusCode != 404 {
		t.Fatalf("toolbox of no sandbox: %d %s", resp.StatusCode, b)
	}
}

// E2B's envd traffic carries the gateway's access token; the host gets
// one for the hosts' admin, and envd's Basic user passes through.
func TestE2BEnvdThroughTheGateway(t *testing.T) {
	f := newFixture(t)
	req, _ := http.NewRequest("POST", f.gw.URL+"/e2b/sandboxes", strings.NewReader(`{"templateID":"base"}`))
	req.Header.Set("X-API-KEY", userKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var made struct {
		SandboxID       string `json:"sandboxID"`
		EnvdAccessToken string `json:"envdAccessToken"`
	}
	json.NewDecoder(resp.Body).Decode(&made)
	resp.Body.Close()
	if resp.StatusCode != 201 || made.EnvdAccessToken == "" {
		t.Fatalf("create: %d %+v", resp.StatusCode, made)
	}
	call := func(token string) *http.Response {
		req, _ := http.NewRequest("POST", f.gw.URL+"/e2b/sandbox/process.Process/List", strings.NewReader(`{}`))
		req.Header.Set("E2b-Sandbox-Id", made.SandboxID)
		req.Header.Set("E2b-Sandbox-Port", "49983")
		req.Header.Set("X-Access-Token", token)
		req.Header.Set("Content-Type", "application/json")
		req.SetBasicAuth("root", "")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := call("wrong"); resp.StatusCode != 401 {
		t.Fatalf("a wrong token: %d", resp.StatusCode)
	}
	if resp := call(made.EnvdAccessToken); resp.StatusCode != 200 {
		t.Fatalf("envd call: %d", resp.StatusCode)
	}
	seen := f.hosts["host-a"].requests()
	last := seen[len(seen)-1]
	want := e2b.AccessToken([]byte(hostToken), auth.Admin, made.SandboxID)
	if last.Path != "/e2b/sandbox/process.Process/List" || last.AccessToken != want || !strings.HasPrefix(last.Auth, "Basic ") {
		t.Fatalf("the host saw %+v", last)
	}
	if sb := recordOf(wire.Sandbox{ID: "x", TTLSeconds: 60}); sb.Spec.Policy.TTLSeconds != 60 {
		t.Fatalf("recordOf lost the TTL: %+v", sb.Spec.Policy)
	}
}

// Archive through the gateway: refused while the sandbox runs, as on one
// host; a sandbox stopped through its object is in the blob store already.
func TestArchiveNeedsAStoppedSandbox(t *testing.T) {
	f := newFixture(t)
	sb := f.create(`{"name":"arch"}`)
	resp, b := f.call("POST", "/v1/sandboxes/arch/archive", "")
	wantError(t, resp, b, http.StatusConflict, wire.CodeSandboxNotStopped)
	if resp, b := f.call("POST", "/v1/sandboxes/arch/stop", ""); resp.StatusCode != 200 {
		t.Fatalf("stop: %d %s", resp.StatusCode, b)
	}
	resp, b = f.call("POST", "/v1/sandboxes/arch/archive", "")
	var got wire.Sandbox
	if resp.StatusCode != 200 || json.Unmarshal(b, &got) != nil || got.ID != sb.ID || got.State != wire.StateStopped {
		t.Fatalf("archive of the stopped sandbox: %d %s", resp.StatusCode, b)
	}
	if mode := f.object(sb.ID).Spec.OperatingMode; mode != "Suspended" {
		t.Fatalf("operatingMode %s", mode)
	}
}
