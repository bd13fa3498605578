package e2b

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/auth/keys/keystest"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/compat/e2b/envdpb/filesystempb"
	"github.com/sbxhq/sbx/internal/compat/e2b/envdpb/processpb"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// fakeSandboxes is the Manager for the control plane's tests: it records
// creates and updates and lists what it holds. Methods a test does not
// use panic through the nil embedded interface.
type fakeSandboxes struct {
	Sandboxes
	boxes   []*store.Sandbox
	created []wire.CreateSandboxRequest
	updates []wire.UpdateSandboxRequest
	egress  []wire.EgressPolicy
	snaps   []*store.Snapshot
	team    string // the principal's team seen by the last call
}

func (f *fakeSandboxes) Create(ctx context.Context, req wire.CreateSandboxRequest) (*store.Sandbox, error) {
	p, _ := auth.FromContext(ctx)
	f.team = p.Team
	f.created = append(f.created, req)
	sb := &store.Sandbox{ID: fmt.Sprintf("sbx-%d", len(f.boxes)), State: wire.StateStarted, CreatedAt: time.Unix(1000, 0),
		Spec: store.Spec{Labels: req.Labels, Policy: &store.Policy{TTLSeconds: req.TTLSeconds, TTLFrom: time.Unix(1000, 0)}}}
	f.boxes = append(f.boxes, sb)
	return sb, nil
}

func (f *fakeSandboxes) List(context.Context, store.Filter) ([]*store.Sandbox, error) {
	return f.boxes, nil
}

func (f *fakeSandboxes) Get(_ context.Context, id string) (*store.Sandbox, error) {
	for _, sb := range f.boxes {
		if sb.ID == id {
			return sb, nil
		}
	}
	return nil, errdefs.NotFound(wire.CodeSandboxNotFound, "sandbox %q not found", id)
}

func (f *fakeSandboxes) CreateSnapshot(_ context.Context, id string, req wire.CreateSnapshotRequest) (*store.Snapshot, error) {
	snap := &store.Snapshot{Name: req.Name, SandboxID: id}
	f.snaps = append(f.snaps, snap)
	return snap, nil
}

func (f *fakeSandboxes) GetSnapshot(_ context.Context, name string) (*store.Snapshot, error) {
	for _, snap := range f.snaps {
		if snap.Name == name {
			return snap, nil
		}
	}
	return nil, errdefs.NotFound(wire.CodeSnapshotNotFound, "snapshot %q not found", name)
}

func (f *fakeSandboxes) ListSnapshots(context.Context) ([]*store.Snapshot, error) {
	return f.snaps, nil
}

func (f *fakeSandboxes) DeleteSnapshot(ctx context.Context, name string) error {
	snap, err := f.GetSnapshot(ctx, name)
	if err == nil {
		f.snaps = slices.DeleteFunc(f.snaps, func(s *store.Snapshot) bool { return s == snap })
	}
	return err
}

func (f *fakeSandboxes) SetEgress(_ context.Context, id string, p wire.EgressPolicy) (*store.Sandbox, error) {
	f.egress = append(f.egress, p)
	return f.Get(context.Background(), id)
}

func (f *fakeSandboxes) Update(_ context.Context, id string, req wire.UpdateSandboxRequest) (*store.Sandbox, error) {
	f.updates = append(f.updates, req)
	return f.Get(context.Background(), id)
}

func newTestServer(f *fakeSandboxes) *Server {
	return New(f, &authz.Gate{Keys: auth.AdminToken("secret-key")}, Config{Templates: map[string]string{"mine": "debian"}, TokenSecret: []byte("s")})
}

func call(s *Server, method, path, key, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("X-API-KEY", key)
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

func TestCreateTranslatesToSbx(t *testing.T) {
	f := &fakeSandboxes{}
	s := newTestServer(f)
	w := call(s, "POST", "/e2b/v2/sandboxes", "secret-key", `{"templateID":"mine","timeout":120,"metadata":{"k":"v"},"envVars":{"A":"1"},"mcp":null,"network":{}}`)
	if w.Code != 201 {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	req := f.created[0]
	if req.Image != "debian" || req.TTLSeconds != 120 || req.Labels[labelMeta+"k"] != "v" || req.Labels[labelTemplate] != "mine" || req.Env["A"] != "1" {
		t.Fatalf("create request %+v", req)
	}
	if f.team != auth.DefaultTeam {
		t.Fatalf("the Manager saw team %q, want the key's", f.team)
	}
	var got sandboxJSON
	json.Unmarshal(w.Body.Bytes(), &got)
	if got.SandboxID != "sbx-0" || got.EnvdVersion != EnvdVersion || got.EnvdAccessToken == "" || got.Metadata["k"] != "v" ||
		!got.EndAt.Equal(time.Unix(1120, 0)) || got.State != "running" {
		t.Fatalf("answer %+v", got)
	}

	// autoPause: an idle pause after timeout instead of a TTL that deletes.
	call(s, "POST", "/e2b/sandboxes", "secret-key", `{"templateID":"base","timeout":60,"autoPause":true}`)
	req = f.created[1]
	if req.Image != "python" || req.TTLSeconds != 0 || req.AutoPauseSeconds == nil || *req.AutoPauseSeconds != 60 || *req.AutoStopSeconds != 0 {
		t.Fatalf("autoPause request %+v", req)
	}
}

// TestCreateHonoursOrRefusesSecurityOptions: allow_internet_access and
// network's allowOut/denyOut become sbx egress policies; every other option
// the layer does not implement, and any field it does not know, is a 400
// naming it — never dropped.
func TestCreateHonoursOrRefusesSecurityOptions(t *testing.T) {
	f := &fakeSandboxes{}
	s := newTestServer(f)
	for body, want := range map[string]*wire.EgressPolicy{
		`{"allow_internet_access":false}`:                                                     {Mode: wire.EgressBlockAll},
		`{"network":{"denyOut":["0.0.0.0/0"]}}`:                                               {Mode: wire.EgressBlockAll},
		`{"allow_internet_access":false,"network":{"allowOut":["10.1.2.3","example.com"]}}`:   {Mode: wire.EgressAllowList, CIDRs: []string{"10.1.2.3"}, Domains: []string{"example.com"}},
		`{"network":{"denyOut":["0.0.0.0/0","10.0.0.0/8"],"allowOut":["10.1.0.0/16"]}}`:       {Mode: wire.EgressAllowList, CIDRs: []string{"10.1.0.0/16"}},
		`{"network":{"denyOut":["10.0.0.0/8"]}}`:                                              {Mode: wire.EgressDenyList, CIDRs: []string{"10.0.0.0/8"}},
		`{"allow_internet_access":true,"secure":true,"network":{"allowPublicTraffic":false}}`: nil,
	} {
		n := len(f.created)
		if w := call(s, "POST", "/e2b/v2/sandboxes", "secret-key", body); w.Code != 201 {
			t.Errorf("%s: %d %s", body, w.Code, w.Body)
			continue
		}
		req := f.created[n]
		if fmt.Sprint(req.Egress) != fmt.Sprint(want) || (want != nil) != (req.Network == wire.NetworkBridge) {
			t.Errorf("%s: network %q egress %+v, want %+v", body, req.Network, req.Egress, want)
		}
	}
	for body, field := range map[string]string{
		`{"network":{"denyOut":["10.0.0.0/8"],"allowOut":["10.1.0.0/16"]}}`: "network.allowOut",
		`{"network":{"allowPublicTraffic":true}}`:                           "network.allowPublicTraffic",
		`{"network":{"maskRequestHost":"x"}}`:                               "network.maskRequestHost",
		`{"network":{"rules":{}}}`:                                          "network.rules",
		`{"network":{"egressProxy":{"address":"p:1"}}}`:                     "network.egressProxy",
		`{"network":{"httpsPorts":[443]}}`:                                  "network.httpsPorts",
		`{"network":{"somethingNew":true}}`:                                 "somethingNew",
		`{"mcp":{"x":{}}}`:                                                  "mcp",
		`{"iam":{"tokens":{}}}`:                                             "iam",
		`{"volumeMounts":[{"name":"v","path":"/v","mode":"ro"}]}`:           "mode",
		`{"autoResume":{"enabled":true}}`:                                   "autoResume",
		`{"autoPauseMemory":false}`:                                         "autoPauseMemory",
		`{"allowInternetAccess":false}`:                                     "allowInternetAccess",
		`{"secure":false}`:                                                  "secure",
	} {
		n := len(f.created)
		w := call(s, "POST", "/e2b/v2/sandboxes", "secret-key", body)
		if w.Code != 400 || !strings.Contains(w.Body.String(), field) || len(f.created) != n {
			t.Errorf("%s: %d %s, want a 400 naming %s and no sandbox", body, w.Code, w.Body, field)
		}
	}
}

// TestCreateHonoursEveryField sends each field of E2B's NewSandbox that sbx
// honours in one create and finds each in the sbx request; the fields it
// refuses are TestCreateHonoursOrRefusesSecurityOptions'.
func TestCreateHonoursEveryField(t *testing.T) {
	f := &fakeSandboxes{}
	s := newTestServer(f)
	body := `{"templateID":"mine","timeout":77,"metadata":{"team":"x"},"envVars":{"E":"v"},"autoPause":false,
		"autoPauseMemory":true,"secure":true,"allow_internet_access":false,"network":{"allowOut":["10.9.0.1"],"allowPublicTraffic":false},
		"mcp":null,"iam":null,"volumeMounts":[{"name":"data","path":"/data"}],"autoResume":null}`
	if w := call(s, "POST", "/e2b/v2/sandboxes", "secret-key", body); w.Code != 201 {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	req := f.created[0]
	switch {
	case req.Image != "debian" || req.Labels[labelTemplate] != "mine": // templateID
		t.Errorf("template: %+v", req)
	case req.TTLSeconds != 77 || req.AutoPauseSeconds != nil: // timeout, autoPause false
		t.Errorf("timeout: %+v", req)
	case req.Labels[labelMeta+"team"] != "x" || req.Env["E"] != "v": // metadata, envVars
		t.Errorf("metadata/envVars: %+v", req)
	case req.Egress == nil || req.Egress.Mode != wire.EgressAllowList || fmt.Sprint(req.Egress.CIDRs) != "[10.9.0.1]": // allow_internet_access, network
		t.Errorf("egress: %+v", req.Egress)
	case fmt.Sprint(req.Volumes) != "[{data /data false}]": // volumeMounts
		t.Errorf("volumes: %+v", req.Volumes)
	}
}

// TestAnswers: endAt only when the sandbox has an end; the sandbox domain
// is the preview domain, else localhost (never E2B's cloud); an archived
// sandbox is paused; Template.exists' alias lookup; refreshes extend the
// TTL; connect's memory:false is refused.
func TestAnswers(t *testing.T) {
	f := &fakeSandboxes{boxes: []*store.Sandbox{
		{ID: "forever", State: wire.StateStarted, Spec: store.Spec{Labels: map[string]string{labelTemplate: "base"}}},
		{ID: "packed", State: wire.StateArchived, Spec: store.Spec{Labels: map[string]string{labelTemplate: "base"}}},
	}}
	s := newTestServer(f)
	w := call(s, "GET", "/e2b/sandboxes/forever", "secret-key", "")
	if strings.Contains(w.Body.String(), "endAt") || !strings.Contains(w.Body.String(), `"domain":"localhost"`) || !strings.Contains(w.Body.String(), `"state":"running"`) {
		t.Errorf("no TTL: %s", w.Body)
	}
	if w := call(s, "GET", "/e2b/sandboxes/packed", "secret-key", ""); !strings.Contains(w.Body.String(), `"state":"paused"`) {
		t.Errorf("archived: %s", w.Body)
	}
	withDomain := New(f, &authz.Gate{Keys: auth.AdminToken("secret-key")}, Config{TokenSecret: []byte("s"), Domain: "sbx.example:8443"})
	if w := call(withDomain, "GET", "/e2b/sandboxes/forever", "secret-key", ""); !strings.Contains(w.Body.String(), `"domain":"sbx.example:8443"`) {
		t.Errorf("preview domain: %s", w.Body)
	}
	// The host names getHost builds with a preview domain that has a port.
	hr := httptest.NewRequest("GET", "http://49983-forever.sbx.example:8443/health", nil)
	hw := httptest.NewRecorder()
	if !withDomain.ServeHost(hw, hr, "sbx.example:8443") || hw.Code != http.StatusUnauthorized {
		t.Errorf("envd by host name: %d %s", hw.Code, hw.Body)
	}
	if w := call(s, "GET", "/e2b/templates/aliases/base", "secret-key", ""); w.Code != 200 {
		t.Errorf("alias base: %d %s", w.Code, w.Body)
	}
	if w := call(s, "GET", "/e2b/templates/aliases/nope", "secret-key", ""); w.Code != 404 {
		t.Errorf("alias nope: %d %s", w.Code, w.Body)
	}
	if w := call(s, "POST", "/e2b/sandboxes/forever/refreshes", "secret-key", `{"duration":600}`); w.Code != 204 || len(f.updates) != 1 || *f.updates[0].TTLSeconds != 600 {
		t.Errorf("refresh: %d %s %+v", w.Code, w.Body, f.updates)
	}
	for _, body := range []string{`{"duration":0}`, `{"duration":3601}`, `{"duration":60,"other":1}`} {
		if w := call(s, "POST", "/e2b/sandboxes/forever/refreshes", "secret-key", body); w.Code != 400 {
			t.Errorf("refresh %s: %d %s", body, w.Code, w.Body)
		}
	}
	if w := call(s, "POST", "/e2b/v2/sandboxes/forever/connect", "secret-key", `{"timeout":60,"memory":false}`); w.Code != 400 || !strings.Contains(w.Body.String(), "memory") {
		t.Errorf("connect memory:false: %d %s", w.Code, w.Body)
	}
	for body, want := range map[string]string{
		`{"allow_internet_access":false}`: "{block-all [] [] <nil>}",
		`{}`:                              "{allow-all [] [] <nil>}",
		`{"denyOut":["0.0.0.0/0"],"allowOut":["10.9.0.0/16"]}`: "{allow-list [10.9.0.0/16] [] <nil>}",
		`{"rules":{"x":{}}}`:                                    "rules",
		`{"egressProxy":{"address":"p:1"}}`:                     "egressProxy",
		`{"denyOut":["10.0.0.0/8"],"allowOut":["10.1.0.0/16"]}`: "allowOut",
	} {
		n := len(f.egress)
		w := call(s, "PUT", "/e2b/sandboxes/forever/network", "secret-key", body)
		switch {
		case strings.HasPrefix(want, "{") && (w.Code != 204 || len(f.egress) != n+1 || fmt.Sprint(f.egress[n]) != want):
			t.Errorf("updateNetwork %s: %d %s %v, want %s", body, w.Code, w.Body, f.egress[n:], want)
		case !strings.HasPrefix(want, "{") && (w.Code != 400 || !strings.Contains(w.Body.String(), want) || len(f.egress) != n):
			t.Errorf("updateNetwork %s: %d %s, want a 400 naming %s", body, w.Code, w.Body, want)
		}
	}
	if w := call(s, "POST", "/e2b/sandboxes/forever/pause", "secret-key", `{"memory":false}`); w.Code != 400 || !strings.Contains(w.Body.String(), "memory") {
		t.Errorf("pause memory:false: %d %s", w.Code, w.Body)
	}
}

// TestSnapshots: createSnapshot, listSnapshots (filtered by sandbox),
// create from the snapshot, deleteSnapshot (as E2B deletes a template);
// sbx's own templates cannot be deleted.
func TestSnapshots(t *testing.T) {
	f := &fakeSandboxes{}
	s := newTestServer(f)
	call(s, "POST", "/e2b/v2/sandboxes", "secret-key", `{}`)
	w := call(s, "POST", "/e2b/sandboxes/sbx-0/snapshots", "secret-key", `{"name":"snap1"}`)
	if w.Code != 201 || !strings.Contains(w.Body.String(), `"snapshotID":"snap1"`) {
		t.Fatalf("createSnapshot: %d %s", w.Code, w.Body)
	}
	call(s, "POST", "/e2b/sandboxes/other/snapshots", "secret-key", ``)
	if w := call(s, "GET", "/e2b/snapshots?sandboxID=sbx-0", "secret-key", ""); strings.TrimSpace(w.Body.String()) != `[{"snapshotID":"snap1","names":["snap1"]}]` {
		t.Fatalf("listSnapshots: %s", w.Body)
	}
	if w := call(s, "POST", "/e2b/v2/sandboxes", "secret-key", `{"templateID":"snap1"}`); w.Code != 201 || f.created[1].Snapshot != "snap1" || f.created[1].Image != "" {
		t.Fatalf("create from a snapshot: %d %s %+v", w.Code, w.Body, f.created[1])
	}
	if w := call(s, "DELETE", "/e2b/templates/snap1", "secret-key", ""); w.Code != 204 || len(f.snaps) != 1 {
		t.Fatalf("deleteSnapshot: %d %s", w.Code, w.Body)
	}
	if w := call(s, "DELETE", "/e2b/templates/snap1", "secret-key", ""); w.Code != 404 {
		t.Fatalf("deleteSnapshot again: %d %s", w.Code, w.Body)
	}
	if w := call(s, "DELETE", "/e2b/templates/base", "secret-key", ""); w.Code != 400 {
		t.Fatalf("delete template base: %d %s", w.Code, w.Body)
	}
}

type fakeUsage struct{}

func (fakeUsage) Stats(sb *store.Sandbox) wire.SandboxStats {
	pct := 50.0
	return wire.SandboxStats{ID: sb.ID, Time: time.Unix(2000, 0), CPUPercent: &pct, MemoryBytes: 7 << 20, MemoryLimitBytes: 64 << 20}
}

// TestMetrics: getMetrics is one sample of what the sandbox uses now, none
// outside the window asked for, and a refusal without a sampler.
func TestMetrics(t *testing.T) {
	f := &fakeSandboxes{boxes: []*store.Sandbox{{ID: "m", State: wire.StateStarted, Spec: store.Spec{CPU: 2}}}}
	s := New(f, &authz.Gate{Keys: auth.AdminToken("secret-key")}, Config{TokenSecret: []byte("s"), Usage: fakeUsage{}})
	w := call(s, "GET", "/e2b/sandboxes/m/metrics", "secret-key", "")
	var got []metricJSON
	if json.Unmarshal(w.Body.Bytes(), &got) != nil || len(got) != 1 || got[0].CPUUsedPct != 25 || got[0].CPUCount != 2 || got[0].MemUsed != 7<<20 || got[0].TimestampUnix != 2000 {
		t.Fatalf("metrics: %d %s", w.Code, w.Body)
	}
	if w := call(s, "GET", "/e2b/sandboxes/m/metrics?end=1000", "secret-key", ""); strings.TrimSpace(w.Body.String()) != "[]" {
		t.Fatalf("metrics before the window: %s", w.Body)
	}
	if w := call(newTestServer(f), "GET", "/e2b/sandboxes/m/metrics", "secret-key", ""); w.Code != 404 {
		t.Fatalf("without a sampler: %d %s", w.Code, w.Body)
	}
}

func TestControlPlaneErrors(t *testing.T) {
	s := newTestServer(&fakeSandboxes{})
	for _, c := range []struct {
		method, path, key, body string
		status                  int
	}{
		{"POST", "/e2b/v2/sandboxes", "wrong", `{}`, 401},
		{"POST", "/e2b/v2/sandboxes", "secret-key", `{"templateID":"nope"}`, 404},
		{"POST", "/e2b/v2/sandboxes", "secret-key", `{"templateID":`, 400},
		{"POST", "/e2b/v2/sandboxes", "secret-key", `{"timeout":-1}`, 400},
		{"GET", "/e2b/sandboxes/ghost", "secret-key", ``, 404},
		{"POST", "/e2b/sandboxes/ghost/timeout", "secret-key", `{"timeout":10}`, 404},
		{"GET", "/e2b/templates", "secret-key", ``, 404},
		{"GET", "/e2b/v2/sandboxes?nextToken=x", "secret-key", ``, 400},
	} {
		w := call(s, c.method, c.path, c.key, c.body)
		var body struct {
			Code    int
			Message string
		}
		if w.Code != c.status || json.Unmarshal(w.Body.Bytes(), &body) != nil || body.Code != c.status || body.Message == "" {
			t.Errorf("%s %s: %d %s, want %d in E2B's format", c.method, c.path, w.Code, w.Body, c.status)
		}
	}
}

func TestListPagesWithNextToken(t *testing.T) {
	f := &fakeSandboxes{}
	s := newTestServer(f)
	for range 5 {
		call(s, "POST", "/e2b/v2/sandboxes", "secret-key", `{}`)
	}
	f.boxes = append(f.boxes, &store.Sandbox{ID: "not-e2b", State: wire.StateStarted}) // made through sbx's API
	seen := map[string]bool{}
	token := ""
	for pages := 0; ; pages++ {
		w := call(s, "GET", "/e2b/v2/sandboxes?limit=2&nextToken="+token, "secret-key", "")
		var page []sandboxJSON
		if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil || len(page) > 2 {
			t.Fatalf("page %d: %s", pages, w.Body)
		}
		for _, p := range page {
			seen[p.SandboxID] = true
		}
		if token = w.Header().Get("X-Next-Token"); token == "" {
			break
		}
		if pages > 5 {
			t.Fatal("paging does not end")
		}
	}
	if len(seen) != 5 || seen["not-e2b"] {
		t.Fatalf("listed %v", seen)
	}
}

func TestSetTimeoutSetsTTL(t *testing.T) {
	f := &fakeSandboxes{}
	s := newTestServer(f)
	call(s, "POST", "/e2b/v2/sandboxes", "secret-key", `{}`)
	if w := call(s, "POST", "/e2b/sandboxes/sbx-0/timeout", "secret-key", `{"timeout":90}`); w.Code != 204 {
		t.Fatalf("timeout: %d %s", w.Code, w.Body)
	}
	if u := f.updates[0]; u.TTLSeconds == nil || *u.TTLSeconds != 90 {
		t.Fatalf("update %+v", u)
	}
}

func TestAccessTokens(t *testing.T) {
	svc := keystest.New(t)
	s := New(&fakeSandboxes{}, &authz.Gate{Keys: svc}, Config{TokenSecret: []byte("s")})
	p, _ := keystest.Key(t, svc, wire.ScopeExec)
	tok := s.accessToken(p, "sbx-1")
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("X-Access-Token", tok)
	got, err := s.checkAccessToken(r, "sbx-1")
	if err != nil || got.Team != p.Team || got.KeyID != p.KeyID || !got.Has(auth.ScopeExec) {
		t.Fatalf("token: %+v %v", got, err)
	}
	if _, err := s.checkAccessToken(r, "sbx-2"); err == nil {
		t.Fatal("a token worked for another sandbox")
	}
	claims, _ := json.Marshal(tokenClaims{KeyID: p.KeyID, Team: "red"})
	forged := base64.RawURLEncoding.EncodeToString(claims) + tok[strings.IndexByte(tok, '.'):]
	r.Header.Set("X-Access-Token", forged)
	if _, err := s.checkAccessToken(r, "sbx-1"); err == nil {
		t.Fatal("a token with changed claims worked")
	}
	w := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/e2b/sandbox/filesystem.Filesystem/Stat", strings.NewReader(`{}`))
	req.Header.Set("E2b-Sandbox-Id", "sbx-1")
	s.ServeHTTP(w, req)
	if w.Code != http.StatusUnauthorized {
		t.Fatalf("envd without token: %d", w.Code)
	}
}

func TestTranslateExecEvent(t *testing.T) {
	out := translateExecEvent(wire.ExecEvent{Type: "stdout", Data: []byte("hi")})
	if string(out.GetData().GetStdout()) != "hi" {
		t.Fatalf("stdout %v", out)
	}
	end := translateExecEvent(wire.ExecEvent{Type: "exit", ExitCode: 3}).GetEnd()
	if end.ExitCode != 3 || !end.Exited || end.Status != "exit status 3" {
		t.Fatalf("exit %v", end)
	}
	end = translateExecEvent(wire.ExecEvent{Type: "exit", ExitCode: 137, Signal: "SIGKILL"}).GetEnd()
	if end.ExitCode != -1 || end.Exited || end.Status != "signal: killed" {
		t.Fatalf("killed %v", end)
	}
	if translateExecEvent(wire.ExecEvent{Type: "start"}) != nil {
		t.Fatal("start has no envd counterpart here (Start sends its own)")
	}
	if _, ok := translateExecEvent(wire.ExecEvent{Type: "heartbeat"}).Event.(*processpb.ProcessEvent_Keepalive); !ok {
		t.Fatal("heartbeat is a keepalive")
	}
}

func TestTranslateRunEvent(t *testing.T) {
	res := translateRunEvent(wire.RunEvent{Type: "result", Result: &wire.CodeResult{Main: true, Text: "42", PNG: []byte("\x89PNG"), HTML: "<b>"}})
	if len(res) != 1 || res[0]["text"] != "42" || res[0]["is_main_result"] != true || res[0]["png"] != base64.StdEncoding.EncodeToString([]byte("\x89PNG")) || res[0]["html"] != "<b>" {
		t.Fatalf("result %v", res)
	}
	errs := translateRunEvent(wire.RunEvent{Type: "error", Error: &wire.CodeError{Name: "ZeroDivisionError", Value: "division by zero", Traceback: "tb"}})
	if errs[0]["name"] != "ZeroDivisionError" || errs[0]["traceback"] != "tb" {
		t.Fatalf("error %v", errs)
	}
	if got := translateRunEvent(wire.RunEvent{Type: "stderr", Data: []byte("x")}); got[0]["type"] != "stderr" || got[0]["text"] != "x" {
		t.Fatalf("stderr %v", got)
	}
	if _, err := sbxLanguage("r"); errdefs.CodeOf(err) != wire.CodeUnknownLanguage {
		t.Fatalf("language r: %v", err)
	}
}

func TestEntryInfoAndPaths(t *testing.T) {
	e := entryInfo(wire.FileInfo{Name: "d", Path: "/tmp/d", Type: "dir", Mode: "0755"})
	if e.Type != filesystempb.FileType_FILE_TYPE_DIRECTORY || e.Mode != 0o755 || e.Permissions != "drwxr-xr-x" {
		t.Fatalf("dir %v", e)
	}
	for in, want := range map[string]string{"a.txt": "/home/user/a.txt", "/x/../y": "/y", "": "/home/user"} {
		if got := absPath(in, "user"); got != want {
			t.Errorf("absPath(%q) = %q, want %q", in, got, want)
		}
	}
	if got := absPath("a", "root"); got != "/root/a" {
		t.Errorf("root's relative path: %q", got)
	}
	if relativeTo("/tmp/w", "/tmp/w/sub/f") != "sub/f" {
		t.Error("relativeTo")
	}
}

// TestHostRouting: {port}-{sandbox}.{domain} reaches envd (here: refused for
// the missing token, so it was routed) and the code interpreter; other
// ports and hosts are left to sbx's previews.
func TestHostRouting(t *testing.T) {
	s := newTestServer(&fakeSandboxes{})
	for host, want := range map[string]bool{
		"49983-sbx-abc.e2b.test":      true,
		"49999-sbx-abc.e2b.test:8443": true,
		"8080-sbx-abc.e2b.test":       false,
		"49983-sbx-abc.other.test":    false,
		"e2b.test":                    false,
	} {
		r := httptest.NewRequest("GET", "/health", nil)
		r.Host = host
		w := httptest.NewRecorder()
		if got := s.ServeHost(w, r, "e2b.test"); got != want {
			t.Errorf("%s: served %v, want %v", host, got, want)
		} else if got && w.Code != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401 without an access token", host, w.Code)
		}
	}
	if s.ServeHost(httptest.NewRecorder(), httptest.NewRequest("GET", "http://49983-x.e2b.test/", nil), "") {
		t.Error("served a host without a configured domain")
	}
}

// An envd token dies with the API key it was made with.
func TestAccessTokenDiesWithItsKey(t *testing.T) {
	svc := keystest.New(t)
	f := &fakeSandboxes{}
	s := New(f, &authz.Gate{Keys: svc}, Config{TokenSecret: []byte("s")})
	p, _ := keystest.Key(t, svc, wire.ScopeSandboxesWrite, wire.ScopeExec)
	tok := s.accessToken(p, "sbx-1")
	envd := func() int {
		w := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "/e2b/sandbox/filesystem.Filesystem/Stat", strings.NewReader(`{}`))
		req.Header.Set("E2b-Sandbox-Id", "sbx-1")
		req.Header.Set("X-Access-Token", tok)
		s.ServeHTTP(w, req)
		return w.Code
	}
	if c := envd(); c == http.StatusUnauthorized {
		t.Fatalf("live key's token refused: %d", c)
	}
	keystest.Revoke(t, svc, p)
	if c := envd(); c != http.StatusUnauthorized {
		t.Fatalf("revoked key's token: %d, want 401", c)
	}
}
