package integration

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/sdk"
)

// TestKubeIdentity: over mutual TLS the gateway forwards each caller's own
// identity (key id, team, scopes) to the host, not the hosts' admin key,
// and the host runs the call as that caller: its audit log has the
// tenant's key id and team, a forwarded principal is scoped to its team
// and refused what its scopes lack, on the host itself. A caller cannot
// make the gateway forward another identity, and a host without the
// gateway's certificate on the connection refuses the header, even next
// to its admin key.
func TestKubeIdentity(t *testing.T) {
	const plainNode, node = "sbx-ident-plain", "sbx-ident"
	gc := startGatewayCluster(t, plainNode)
	c := gc.cluster
	c.kubectl("cordon", plainNode) // the sandboxes go to the mutual-TLS host
	p := newClusterPKI(t)
	host := startMTLSHost(t, gc, p, node, portOf(freeAddr(t)))
	waitFor(t, 90*time.Second, node+" to be a Ready node", func() bool {
		return c.kubeField("node", node, `{.status.conditions[?(@.type=="Ready")].status}`) == "True"
	})
	keyA, entryA := gatewayKey(t, "team-a", "sandboxes:read", "sandboxes:write", "exec")
	keyB, entryB := gatewayKey(t, "team-b", "sandboxes:read", "sandboxes:write", "exec")
	keysFile := filepath.Join(c.dir, "keys.yaml")
	if err := os.WriteFile(keysFile, []byte("keys:\n"+entryA+entryB), 0o600); err != nil {
		t.Fatal(err)
	}
	gc.gw.stop()
	gw := startGateway(t, c, gc.gwKC, gc.keyFile, gc.key, freeAddr(t), append(mtlsGatewayFlags(p), "--keys-file", keysFile)...)
	a := sdk.NewClient("http://"+gw.addr, keyA)
	ctx := context.Background()
	idA := strings.SplitN(keyA, "_", 3)[1]

	sb, err := a.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "box", CPU: 0.25, MemoryMiB: 128})
	if err != nil {
		t.Fatalf("team A's create: %v", err)
	}
	if res, err := a.Exec(ctx, "box", sdk.ExecRequest{Shell: "echo a > /workspace/who"}); err != nil || res.ExitCode != 0 {
		t.Fatalf("team A's exec through the gateway: %+v %v", res, err)
	}

	// A Daytona toolbox call through the gateway reaches the host's layer
	// with A's principal and no key, and the host's layer takes it.
	dreq, _ := http.NewRequest("POST", "http://"+gw.addr+"/daytona/toolbox/"+sb.ID+"/process/execute", strings.NewReader(`{"command":"cat /workspace/who"}`))
	dreq.Header.Set("Authorization", "Bearer "+keyA)
	dreq.Header.Set("Content-Type", "application/json")
	dresp, err := http.DefaultClient.Do(dreq)
	if err != nil {
		t.Fatal(err)
	}
	dbody, _ := io.ReadAll(dresp.Body)
	dresp.Body.Close()
	if dresp.StatusCode != 200 || !strings.Contains(string(dbody), `"result":"a`) {
		t.Errorf("team A's Daytona executeCommand through the gateway: %d %s", dresp.StatusCode, dbody)
	}

	// The host's audit log has A's write as A's: its key id and team.
	entries, err := host.client.Audit(ctx, "", 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range entries {
		if e.Path == "/v1/sandboxes/"+sb.ID+"/exec" {
			found = true
			if e.KeyID != idA || e.Team != "team-a" {
				t.Errorf("the host audited A's exec as key %q of team %q, want %s of team-a", e.KeyID, e.Team, idA)
			}
		}
	}
	if !found {
		t.Errorf("A's exec is not in the host's audit log: %+v", entries)
	}

	// A caller's own header naming the admin does not get through the gateway.
	admin := auth.Principal{KeyID: auth.Admin.KeyID, Team: auth.DefaultTeam, Scopes: []auth.Scope{auth.ScopeAdmin}}
	req, _ := http.NewRequest("GET", "http://"+gw.addr+"/v1/sandboxes", nil)
	req.Header.Set("Authorization", "Bearer "+keyB)
	req.Header.Set(auth.HeaderPrincipal, admin.Header())
	if code, body := do(t, http.DefaultClient, req); code != 200 || strings.Contains(body, sb.ID) {
		t.Errorf("team B's list with a forged admin header through the gateway: %d %s", code, body)
	}
	req, _ = http.NewRequest("POST", "http://"+gw.addr+"/v1/sandboxes/"+sb.ID+"/exec", strings.NewReader(`{"shell":"cat /workspace/who"}`))
	req.Header.Set("Authorization", "Bearer "+keyB)
	req.Header.Set(auth.HeaderPrincipal, (auth.Principal{KeyID: idA, Team: "team-a", Scopes: []auth.Scope{auth.ScopeExec}}).Header())
	if code, body := do(t, http.DefaultClient, req); code != 404 || !strings.Contains(body, "SANDBOX_NOT_FOUND") {
		t.Errorf("team B's exec in A's sandbox claiming to be A: %d %s", code, body)
	}

	// On the host itself, as the gateway (its certificate): the forwarded
	// principal's team and scopes are what the host enforces.
	hc := host.httpClient()
	asPrincipal := func(method, path, body string, pr auth.Principal) (int, string) {
		req, _ := http.NewRequest(method, host.baseURL()+path, strings.NewReader(body))
		req.Header.Set(auth.HeaderPrincipal, pr.Header())
		return do(t, hc, req)
	}
	teamB := auth.Principal{KeyID: "b0b0b0b0b0b0b0b0", Team: "team-b", Scopes: []auth.Scope{auth.ScopeSandboxesRead, auth.ScopeExec}}
	if code, body := asPrincipal("GET", "/v1/sandboxes/"+sb.ID, "", teamB); code != 404 {
		t.Errorf("team B's principal getting A's sandbox on the host: %d %s", code, body)
	}
	if code, body := asPrincipal("GET", "/v1/sandboxes", "", teamB); code != 200 || strings.Contains(body, sb.ID) {
		t.Errorf("team B's principal listing the host: %d %s", code, body)
	}
	readOnlyA := auth.Principal{KeyID: idA, Team: "team-a", Scopes: []auth.Scope{auth.ScopeSandboxesRead}}
	if code, body := asPrincipal("POST", "/v1/sandboxes/"+sb.ID+"/exec", `{"shell":"true"}`, readOnlyA); code != 403 || !strings.Contains(body, "MISSING_SCOPE") {
		t.Errorf("a read-only principal's exec on the host: %d %s", code, body)
	}
	if code, body := asPrincipal("POST", "/v1/sandboxes/"+sb.ID+"/exec", `{"shell":"cat /workspace/who"}`, auth.Principal{KeyID: idA, Team: "team-a", Scopes: []auth.Scope{auth.ScopeExec}}); code != 200 || !strings.Contains(body, `"stdout":"a\n"`) {
		t.Errorf("A's principal's exec on the host: %d %s", code, body)
	}

	// A host without the gateway's certificate on the connection refuses
	// the header, with its admin key or without.
	plain := gc.hosts[plainNode]
	for _, withKey := range []bool{false, true} {
		req, _ := http.NewRequest("GET", plain.baseURL()+"/v1/sandboxes", nil)
		req.Header.Set(auth.HeaderPrincipal, admin.Header())
		if withKey {
			req.Header.Set("Authorization", "Bearer "+gc.key)
		}
		if code, body := do(t, http.DefaultClient, req); code != 401 || !strings.Contains(body, auth.HeaderPrincipal) {
			t.Errorf("a forged %s on a plain host (admin key: %v): %d %s", auth.HeaderPrincipal, withKey, code, body)
		}
	}

	if err := a.DeleteSandbox(ctx, "box", true); err != nil {
		t.Fatal(err)
	}
}

// do sends req with hc and returns the status and body.
func do(t *testing.T, hc *http.Client, req *http.Request) (int, string) {
	t.Helper()
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
