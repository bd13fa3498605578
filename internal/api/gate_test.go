package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/authz/authztest"
	"github.com/sbxhq/sbx/internal/metrics"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// publicRoutes are the routes that take no API key, each for its reason;
// every other route of the table goes through the gate.
var publicRoutes = map[string]string{
	"GET /healthz":         "liveness probes carry no key",
	"GET /v1/openapi.json": "the document describes the API to anyone",
	"GET /metrics":         "checks its own keys (the metrics key); TestMetricsGated",
	"previews":             "a port's token or signature, or a key with exec (servePreview); TestPreviewNeedsExec",
}

var pathParam = regexp.MustCompile(`\{([a-z]+)(\.\.\.)?\}`)

// TestEveryRouteGated walks the API's route table: every route refuses a
// request without a key and one whose key lacks its scope, applies the
// key's rate limit, and audits writes.
func TestEveryRouteGated(t *testing.T) {
	h := authztest.New(t)
	s := New(newFake(), fakeImages{}, h.Gate.Keys)
	s.SetTenancy(Tenancy{Gate: h.Gate})
	for _, rt := range s.routes() {
		name := rt.method + " " + rt.pattern
		if rt.public {
			if _, ok := publicRoutes[name]; !ok && !strings.Contains(rt.pattern, "/ports/{port}/") {
				t.Errorf("%s is public without a reason in publicRoutes", name)
			}
			continue
		}
		path := pathParam.ReplaceAllStringFunc(rt.pattern, func(m string) string { return "x" + strings.Trim(m, "{}.") })
		write := rt.method != http.MethodGet && rt.method != http.MethodHead && !isReadOnlyPost(rt)
		h.Check(t, authztest.Op{
			Name: name, Need: authz.Op{Scope: rt.scope, Write: write}, Method: rt.method, Path: path,
			Do: func(key string, _ auth.Principal) int { return do(s, rt.method, path, key, "").Code },
		}, nil)
	}
}

// TestCreateOnTouchNeedsWrite: creation on first touch is a create, so an
// exec-only key gets 403 and nothing is created; with sandboxes:write it
// creates.
func TestCreateOnTouchNeedsWrite(t *testing.T) {
	f := newFake()
	keys := keyTable{
		"exec": {KeyID: "k-exec", Team: "acme", Scopes: []auth.Scope{auth.ScopeExec}},
		"both": {KeyID: "k-both", Team: "acme", Scopes: []auth.Scope{auth.ScopeExec, auth.ScopeSandboxesWrite}},
	}
	s := New(f, fakeImages{}, keys)
	touch := func(key string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "/v1/sandboxes/ghost/exec", strings.NewReader(`{"cmd":["true"]}`))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set(CreateIfMissingHeader, "true")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		return rec
	}
	wantError(t, touch("exec"), http.StatusForbidden, wire.CodeMissingScope)
	if len(f.ensured) != 0 {
		t.Fatalf("an exec-only key created %v", f.ensured)
	}
	f.ensureCreates = true
	touch("both")
	if len(f.ensured) != 1 {
		t.Fatalf("a key with sandboxes:write did not create: %v", f.ensured)
	}
}

// TestPreviewNeedsExec: a preview with an API key goes through the gate as
// an exec: a read-only key is refused before anything is looked up or
// started; an exec key gets past the gate (here to a daemon without
// networking).
func TestPreviewNeedsExec(t *testing.T) {
	f := newFake()
	f.stopped = true
	keys := keyTable{
		"ro":   {KeyID: "k-ro", Team: auth.DefaultTeam, Scopes: []auth.Scope{auth.ScopeSandboxesRead, auth.ScopeSandboxesWrite}},
		"exec": {KeyID: "k-exec", Team: auth.DefaultTeam, Scopes: []auth.Scope{auth.ScopeExec}},
	}
	s := New(f, fakeImages{}, keys)
	for _, m := range []string{"GET", "POST"} {
		wantError(t, do(s, m, "/v1/sandboxes/sb1/ports/8080/", "ro", ""), http.StatusForbidden, wire.CodeMissingScope)
	}
	if f.holds != 0 || len(f.ensured) != 0 {
		t.Fatalf("a refused preview touched the sandbox: holds %d, ensured %v", f.holds, f.ensured)
	}
	wantError(t, do(s, "GET", "/v1/sandboxes/sb1/ports/8080/", "exec", ""), http.StatusServiceUnavailable, wire.CodeNetworkUnavailable)
}

// TestMetricsTeamScoped: a team's metrics:read key sees its own team's
// sandboxes, usage and quotas only; the bootstrap admin key and the metrics
// key see every team's.
func TestMetricsTeamScoped(t *testing.T) {
	s, _ := newTestServer(t)
	keys := keyTable{"acme-metrics": {KeyID: "k-m", Team: "acme", Scopes: []auth.Scope{auth.ScopeMetricsRead}}}
	s.auth, s.gate.Keys = keys, keys
	list := []*store.Sandbox{
		{ID: "sbx-acme1", Name: "mine", Team: "acme", State: wire.StateStarted},
		{ID: "sbx-rival1", Name: "secret-project", Team: "rival", State: wire.StateStarted},
	}
	m := metrics.New(metrics.Options{
		Sandboxes: func(context.Context) ([]*store.Sandbox, error) { return list, nil },
		Usage:     metrics.NewSampler(t.TempDir()),
		Teams: func(context.Context) ([]wire.TeamUsage, error) {
			return []wire.TeamUsage{{Team: "acme", Sandboxes: 1}, {Team: "rival", Sandboxes: 7, Quotas: wire.Quotas{MaxSandboxes: 9}}}, nil
		},
	})
	m.ObservePools(func() map[[2]string]int { return map[[2]string]int{{"acme", "p"}: 1, {"rival", "q"}: 2} })
	s.SetMetrics(MetricsConfig{Metrics: m, Token: metricsKey})

	body := do(s, "GET", "/metrics", "acme-metrics", "")
	if body.Code != 200 {
		t.Fatalf("team key: %d %s", body.Code, body.Body)
	}
	for _, leak := range []string{"rival", "sbx-rival1", "secret-project", "sbx_api_requests_total"} {
		if strings.Contains(body.Body.String(), leak) {
			t.Errorf("team acme's /metrics shows %q:\n%s", leak, body.Body)
		}
	}
	for _, want := range []string{`sandbox="sbx-acme1"`, `team="acme"`, `pool="p"`} {
		if !strings.Contains(body.Body.String(), want) {
			t.Errorf("team acme's /metrics lacks %s", want)
		}
	}
	for _, key := range []string{testKey, metricsKey} {
		all := do(s, "GET", "/metrics", key, "").Body.String()
		for _, want := range []string{`sandbox="sbx-rival1"`, `team="rival"`, `pool="q"`} {
			if !strings.Contains(all, want) {
				t.Errorf("the operator's /metrics lacks %s", want)
			}
		}
	}
}
