package integration

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// TestPreviewTokenTakesItsKeysSteps: a request let in by a port's token
// (no API key) acts for the key that exposed the port, through the same
// gate: that key's rate limit applies to it, and a write through it is in
// the key's team's audit log under the key's id.
func TestPreviewTokenTakesItsKeysSteps(t *testing.T) {
	d := startDaemon(t, "--rate-limit", "0.2", "--rate-burst", "30")
	ctx := context.Background()
	client, key := d.teamKey("blue", sdk.Quotas{}, sdk.ScopeSandboxesWrite, sdk.ScopeSandboxesRead, sdk.ScopeExec)
	if _, err := client.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "web"}); err != nil {
		t.Fatal(err)
	}
	if res, err := client.Exec(ctx, "web", sdk.ExecRequest{Shell: "mkdir -p /www && echo hello > /www/index.html && busybox httpd -p 8080 -h /www"}); err != nil || res.ExitCode != 0 {
		t.Fatalf("start httpd: %+v %v", res, err)
	}
	port, err := client.ExposePort(ctx, "web", sdk.ExposePortRequest{Port: 8080})
	if err != nil {
		t.Fatal(err)
	}
	url := d.baseURL() + "/v1/sandboxes/web--blue/ports/8080/"
	send := func(method string) int {
		req, _ := http.NewRequest(method, url, strings.NewReader("x"))
		req.Header.Set("X-Sbx-Preview-Token", port.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	waitFor(t, 10*time.Second, "httpd in the sandbox", func() bool { return send("GET") == 200 })
	if status := send("POST"); status == http.StatusTooManyRequests || status == http.StatusUnauthorized {
		t.Fatalf("a POST by token: %d", status)
	}
	// The key's budget (a burst of 30, a request each 5 s) is spent by its
	// token's requests as by its own.
	limited := 0
	for range 40 {
		if send("GET") == http.StatusTooManyRequests {
			limited++
		}
	}
	if limited == 0 {
		t.Fatal("40 token requests past the key's burst were all let through: the key's rate limit does not apply to its token")
	}
	if status, _, _ := d.asKey(key.Key, "GET", "/v1/sandboxes", ""); status != http.StatusTooManyRequests {
		t.Fatalf("the key itself after its token spent its budget: %d, want 429", status)
	}
	var found bool
	waitFor(t, 10*time.Second, "the token's POST in the audit log", func() bool {
		entries, err := d.client.Audit(ctx, "blue", 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Method == "POST" && strings.HasSuffix(e.Path, "/ports/8080/") && e.KeyID == key.ID && e.Team == "blue" {
				found = true
			}
		}
		return found
	})
}
