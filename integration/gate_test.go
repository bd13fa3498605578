package integration

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	cws "github.com/coder/websocket"
	"golang.org/x/crypto/ssh"

	"github.com/sbxhq/sbx/sdk"
)

// TestGateSSHAndSocketIO: the surfaces that need a real daemon go through
// the one gate (internal/authz). An SSH session of a team key's access is
// in the team's audit log; a socket.io CONNECT needs sandboxes:read.
func TestGateSSHAndSocketIO(t *testing.T) {
	g := startSSHGateway(t)
	ctx := context.Background()
	admin := g.d.client
	if _, err := admin.CreateTeam(ctx, sdk.CreateTeamRequest{ID: "acme"}); err != nil {
		t.Fatal(err)
	}
	key := func(scopes ...string) *sdk.CreatedKey {
		k, err := admin.CreateKey(ctx, sdk.CreateKeyRequest{Team: "acme", Scopes: scopes})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	worker := key(sdk.ScopeSandboxesWrite, sdk.ScopeExec)
	c := sdk.NewClient(g.d.baseURL(), worker.Key, g.d.clientOptions()...)
	sb, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "gated"})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("ssh session audited", func(t *testing.T) {
		acc, err := c.CreateSSHAccess(ctx, sb.ID, sdk.CreateSSHAccessRequest{ExpiresInSeconds: 600})
		if err != nil {
			t.Fatal(err)
		}
		g.hostKey, _, _, _, _ = ssh.ParseAuthorizedKey([]byte(acc.HostKey))
		cl, err := g.goClient(acc.Token, "")
		if err != nil {
			t.Fatal(err)
		}
		sess, err := cl.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		out, err := sess.Output("echo gated")
		cl.Close()
		if string(out) != "gated\n" || err != nil {
			t.Fatalf("ssh exec: %q %v", out, err)
		}
		want := "/ssh/" + sb.ID + "/session"
		for range 100 { // the entry is written when the channel's end reaches the gateway
			entries, err := admin.Audit(ctx, "acme", 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if e.Method == "SSH" && e.Path == want && e.KeyID == worker.ID && e.Team == "acme" {
					return
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("no audit entry SSH %s", want)
	})

	t.Run("socket.io connect needs sandboxes:read", func(t *testing.T) {
		connect := func(token string) string {
			cctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			conn, _, err := cws.Dial(cctx, "ws://"+g.d.addr+"/daytona/api/socket.io/?EIO=4&transport=websocket", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.CloseNow()
			if _, open, err := conn.Read(cctx); err != nil || !strings.HasPrefix(string(open), "0") {
				t.Fatalf("engine.io open: %q %v", open, err)
			}
			if err := conn.Write(cctx, cws.MessageText, []byte(`40{"token":"`+token+`"}`)); err != nil {
				t.Fatal(err)
			}
			_, ans, err := conn.Read(cctx)
			if err != nil {
				t.Fatal(err)
			}
			return string(ans)
		}
		if ans := connect(key(sdk.ScopeMetricsRead).Key); !strings.HasPrefix(ans, "44") || !strings.Contains(ans, "sandboxes:read") {
			t.Errorf("CONNECT with a metrics:read key: %q, want a connect error naming sandboxes:read", ans)
		}
		if ans := connect(key(sdk.ScopeSandboxesRead).Key); !strings.HasPrefix(ans, "40") {
			t.Errorf("CONNECT with a sandboxes:read key: %q", ans)
		}
		if ans := connect(""); !strings.HasPrefix(ans, "44") {
			t.Errorf("CONNECT without a key: %q", ans)
		}
	})
}

// TestGateOtherTeamCompat: the compatibility layers, now admitted by the
// gate per route, still answer another team's key (holding every scope)
// 404 for a team's sandbox, and change nothing. The API's routes:
// TestTeamIsolationOnEveryRoute.
func TestGateOtherTeamCompat(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	for _, team := range []string{"acme", "rival"} {
		if _, err := d.client.CreateTeam(ctx, sdk.CreateTeamRequest{ID: team}); err != nil {
			t.Fatal(err)
		}
	}
	all := []string{sdk.ScopeSandboxesWrite, sdk.ScopeSandboxesRead, sdk.ScopeExec, sdk.ScopeImages, sdk.ScopeMetricsRead, sdk.ScopeTeamRead}
	mine, err := d.client.CreateKey(ctx, sdk.CreateKeyRequest{Team: "acme", Scopes: all})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := d.client.CreateKey(ctx, sdk.CreateKeyRequest{Team: "rival", Scopes: all})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sdk.NewClient(d.baseURL(), mine.Key, d.clientOptions()...).CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "private"})
	if err != nil {
		t.Fatal(err)
	}
	send := func(method, path string, header http.Header) int {
		req, _ := http.NewRequest(method, d.baseURL()+path, strings.NewReader("{}"))
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	bearer := http.Header{"Authorization": {"Bearer " + theirs.Key}}
	for _, p := range []string{"/sandbox/{id}", "/sandbox/{id}/start", "/sandbox/{id}/stop"} {
		method := map[bool]string{true: "GET", false: "POST"}[p == "/sandbox/{id}"]
		path := "/daytona/api" + strings.Replace(p, "{id}", sb.ID, 1)
		if got := send(method, path, bearer); got != 404 {
			t.Errorf("Daytona %s %s with another team's key: %d, want 404", method, path, got)
		}
	}
	if got := send("GET", "/e2b/sandboxes/"+sb.ID, http.Header{"X-Api-Key": {theirs.Key}}); got != 404 {
		t.Errorf("E2B GET /sandboxes/{id} with another team's key: %d, want 404", got)
	}
	if got, err := d.client.GetSandbox(ctx, sb.ID); err != nil || got.State != sdk.StateStarted || got.Team != "acme" {
		t.Fatalf("after another team's calls: %+v %v", got, err)
	}
}
