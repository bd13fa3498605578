package httpegress

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sbxhq/sbx/internal/netfloor"
	"github.com/sbxhq/sbx/internal/webhook"
	"github.com/sbxhq/sbx/wire"
)

// forwardFront is front for a proxy with a handler secret, for team t1.
func forwardFront(t *testing.T, up *httptest.Server, handler string) *httptest.Server {
	t.Helper()
	rules := &wire.HTTPEgress{Rules: []wire.HTTPRule{{Host: "*", Action: wire.HTTPActionForward, Forward: &wire.HTTPForwardTo{URL: handler, TimeoutSeconds: 5}}}}
	p := New(Config{Sandboxes: fakeSandboxes{Sandbox{ID: "sb", Team: "t1", HTTP: rules}}, HandlerSecret: "global"})
	cn := &conn{p: p, src: netip.MustParseAddr("10.0.0.2"), dst: netip.MustParseAddrPort(up.Listener.Addr().String()), scheme: "http"}
	t.Cleanup(cn.closeIdle)
	f := httptest.NewServer(http.HandlerFunc(cn.serveHTTP))
	t.Cleanup(f.Close)
	return f
}

func get(t *testing.T, f *httptest.Server) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", f.URL+"/x", nil)
	req.Host = "api.test"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestForwardHandlerFloor: a forward rule's handler on loopback is not
// dialled unless the operator allows it; when it is, its requests are
// signed with the team's key, not the daemon's secret, and a redirect it
// answers is not followed.
func TestForwardHandlerFloor(t *testing.T) {
	defer netfloor.SetDefault(netfloor.Default())
	var upHits, moved, hooked, badSig atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { upHits.Add(1); io.WriteString(w, "up") }))
	defer up.Close()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { moved.Add(1) }))
	defer target.Close()
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hooked.Add(1)
		body, _ := io.ReadAll(r.Body)
		ts, sig := r.Header.Get("X-Sbx-Timestamp"), r.Header.Get("X-Sbx-Signature")
		if !webhook.Verify(webhook.TeamKey("global", "t1"), ts, body, sig) || webhook.Verify("global", ts, body, sig) || r.Header.Get("X-Sbx-Team") != "t1" {
			badSig.Add(1)
		}
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
			return
		}
		json.NewEncoder(w).Encode(wire.HTTPHandlerAnswer{Action: wire.HandlerAllow})
	}))
	defer hooks.Close()

	netfloor.SetDefault(netfloor.New(netfloor.Config{NoHost: true}))
	status, body := get(t, forwardFront(t, up, hooks.URL+"/allow"))
	if status != http.StatusBadGateway || !strings.Contains(body, "network floor") || hooked.Load() != 0 {
		t.Fatalf("handler below the floor: %d %q, handler hits %d", status, body, hooked.Load())
	}

	netfloor.SetDefault(netfloor.New(netfloor.Config{NoHost: true, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}))
	if status, body := get(t, forwardFront(t, up, hooks.URL+"/allow")); status != 200 || body != "up" || hooked.Load() != 1 || badSig.Load() != 0 {
		t.Fatalf("allowed handler: %d %q, handler hits %d, bad signatures %d", status, body, hooked.Load(), badSig.Load())
	}
	status, body = get(t, forwardFront(t, up, hooks.URL+"/redirect"))
	if status != http.StatusBadGateway || !strings.Contains(body, "307") || moved.Load() != 0 || upHits.Load() != 1 {
		t.Fatalf("redirecting handler: %d %q, redirect target hits %d, upstream hits %d", status, body, moved.Load(), upHits.Load())
	}
}
