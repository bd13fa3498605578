package e2b

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/network"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/internal/volume"
	"github.com/sbxhq/sbx/wire"
)

// TestEveryBodyRefusesUnknownFields: no request body of the control plane
// or the code interpreter drops a field it does not know; each is a 400
// naming it.
func TestEveryBodyRefusesUnknownFields(t *testing.T) {
	f := &fakeSandboxes{}
	s := newTestServer(f)
	call(s, "POST", "/e2b/v2/sandboxes", "secret-key", `{"templateID":"mine"}`)
	for _, path := range []string{"timeout", "refreshes", "pause", "connect", "resume", "fork", "snapshots"} {
		w := call(s, "POST", "/e2b/sandboxes/sbx-0/"+path, "secret-key", `{"surprise":1}`)
		if w.Code != 400 || !strings.Contains(w.Body.String(), "surprise") {
			t.Errorf("POST %s with an unknown field: %d %s", path, w.Code, w.Body)
		}
	}
	if w := call(s, "PUT", "/e2b/sandboxes/sbx-0/network", "secret-key", `{"surprise":1}`); w.Code != 400 || !strings.Contains(w.Body.String(), "surprise") {
		t.Errorf("updateNetwork with an unknown field: %d %s", w.Code, w.Body)
	}
	tok := s.accessToken(auth.Principal{KeyID: "admin", Team: auth.DefaultTeam}, "sbx-0")
	for path, body := range map[string]string{"/execute": `{"code":"1","surprise":1}`, "/contexts": `{"language":"python","surprise":1}`} {
		r := httptest.NewRequest("POST", "/e2b/sandbox"+path, strings.NewReader(body))
		r.Header.Set("E2b-Sandbox-Id", "sbx-0")
		r.Header.Set("E2b-Sandbox-Port", "49999")
		r.Header.Set("X-Access-Token", tok)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != 400 || !strings.Contains(w.Body.String(), "surprise") {
			t.Errorf("interpreter %s with an unknown field: %d %s", path, w.Code, w.Body)
		}
	}
}

// TestRefusedAPIsNameTheirMethods: each E2B API sbx does not implement is a
// 400 naming the SDK methods that call it, with or without a key; the
// routes sbx serves beside them still answer.
func TestRefusedAPIsNameTheirMethods(t *testing.T) {
	s := newTestServer(&fakeSandboxes{})
	for req, want := range map[string]string{
		"POST /e2b/v3/templates":               "Template.build",
		"GET /e2b/templates/t/builds/b/status": "Template.getBuildStatus",
		"POST /e2b/v2/templates/t/builds/b":    "Template.build",
		"GET /e2b/templates/t/files/abc":       "Template.build",
		"POST /e2b/templates/tags":             "Template.assignTags",
		"DELETE /e2b/templates/tags":           "Template.removeTags",
		"GET /e2b/templates/t/tags":            "Template.getTags",
		"GET /e2b/v2/sandboxes/sbx-0/logs":     "logs",
	} {
		method, path, _ := strings.Cut(req, " ")
		for _, key := range []string{"secret-key", ""} {
			w := call(s, method, path, key, "")
			if w.Code != 400 || !strings.Contains(w.Body.String(), want) || !strings.Contains(w.Body.String(), "not supported by sbx's E2B layer") {
				t.Errorf("%s (key %q): %d %s, want a 400 naming %s", req, key, w.Code, w.Body, want)
			}
		}
	}
	if w := call(s, "GET", "/e2b/templates/aliases/base", "secret-key", ""); w.Code != 200 {
		t.Errorf("Template.exists: %d %s", w.Code, w.Body)
	}
	if w := call(s, "GET", "/e2b/templates/aliases/base", "", ""); w.Code != http.StatusUnauthorized {
		t.Errorf("Template.exists without a key: %d %s", w.Code, w.Body)
	}
	if w := call(s, "GET", "/e2b/nothing-here", "secret-key", ""); w.Code != 404 {
		t.Errorf("unknown path: %d %s", w.Code, w.Body)
	}
}

// fakeKeys are keys of team "acme" that can be revoked.
type fakeKeys struct{ live map[string]bool }

func (f *fakeKeys) Authenticate(context.Context, string) (auth.Principal, error) {
	return auth.Principal{}, errdefs.Unauthorized(wire.CodeUnauthorized, "no")
}

func (f *fakeKeys) LookupKey(_ context.Context, id string) (auth.Principal, error) {
	if !f.live[id] {
		return auth.Principal{}, errdefs.Unauthorized(wire.CodeUnauthorized, "revoked")
	}
	return auth.Principal{KeyID: id, Team: "acme", Scopes: []auth.Scope{auth.ScopeExec}}, nil
}

func (f *fakeKeys) List(team string) []wire.APIKey {
	var out []wire.APIKey
	for id := range f.live {
		out = append(out, wire.APIKey{ID: id, Team: "acme"})
	}
	if team != "acme" {
		return nil
	}
	return out
}

// TestSignedURLs: uploadUrl/downloadUrl's signature (the SDK's
// getSignature over the access token) admits the key whose token signed
// it, for that path, operation, user and expiry only, and stops working
// when the key is revoked or the URL expires.
func TestSignedURLs(t *testing.T) {
	keys := &fakeKeys{live: map[string]bool{"k1": true, "k2": true}}
	f := &fakeSandboxes{boxes: []*store.Sandbox{{ID: "sbx-1", Team: "acme"}, {ID: "sbx-2", Team: "rival"}}}
	s := New(f, &authz.Gate{Keys: keys}, Config{TokenSecret: []byte("s")})
	now := time.Unix(1_000_000, 0)
	s.now = func() time.Time { return now }
	p2, _ := keys.LookupKey(context.Background(), "k2")
	tok := s.accessToken(p2, "sbx-1")
	url := func(method, id, path, user, exp, sig string) (*http.Request, string) {
		q := "path=" + path + "&signature=" + sig
		if user != "" {
			q += "&username=" + user
		}
		if exp != "" {
			q += "&signature_expiration=" + exp
		}
		return httptest.NewRequest(method, "/e2b/sandbox/files?"+q, nil), id
	}
	check := func(method, id, path, user, exp, sig string) (auth.Principal, error) {
		r, id := url(method, id, path, user, exp, sig)
		return s.checkSignature(r, id, "/files")
	}
	read := signature("/a", "read", "", tok, "")
	if p, err := check("GET", "sbx-1", "/a", "", "", read); err != nil || p.KeyID != "k2" {
		t.Fatalf("downloadUrl: %+v %v", p, err)
	}
	write := signature("/a", "write", "root", tok, "1000100")
	if p, err := check("POST", "sbx-1", "/a", "root", "1000100", write); err != nil || p.KeyID != "k2" {
		t.Fatalf("uploadUrl with user and expiry: %+v %v", p, err)
	}
	for name, c := range map[string][6]string{
		"another path":             {"GET", "sbx-1", "/b", "", "", read},
		"the other operation":      {"POST", "sbx-1", "/a", "", "", read},
		"another user":             {"GET", "sbx-1", "/a", "root", "", read},
		"another sandbox":          {"GET", "sbx-2", "/a", "", "", read},
		"a later expiry":           {"POST", "sbx-1", "/a", "root", "1000200", write},
		"no expiry":                {"POST", "sbx-1", "/a", "root", "", write},
		"a forged signature":       {"GET", "sbx-1", "/a", "", "", read + "x"},
		"another sandbox's secret": {"GET", "sbx-1", "/a", "", "", signature("/a", "read", "", tok+"x", "")},
	} {
		if _, err := check(c[0], c[1], c[2], c[3], c[4], c[5]); err != errBadSignature {
			t.Errorf("%s: %v, want refused", name, err)
		}
	}
	now = now.Add(101 * time.Second)
	if _, err := check("POST", "sbx-1", "/a", "root", "1000100", write); err != errExpired {
		t.Errorf("after the expiry: %v", err)
	}
	delete(keys.live, "k2")
	if _, err := check("GET", "sbx-1", "/a", "", "", read); err != errBadSignature {
		t.Errorf("after the key was revoked: %v", err)
	}
	if _, err := s.checkSignature(httptest.NewRequest("DELETE", "/e2b/sandbox/files?signature=x", nil), "sbx-1", "/files"); err == nil {
		t.Errorf("a signature on DELETE was accepted")
	}
}

type fakePorts struct{ linked []string }

func (f *fakePorts) Link(ctx context.Context, id string, port int) (*store.Port, error) {
	p, _ := auth.FromContext(ctx)
	f.linked = append(f.linked, fmt.Sprintf("%s:%d by %s", id, port, p.KeyID))
	return &store.Port{SandboxID: id, Port: port, Token: "port-token"}, nil
}

// TestTrafficTokenReachesPorts: {port}-{id}.{domain} with E2B's traffic
// token exposes the port on the token's key and hands the request to sbx's
// previews with the port's token; a wrong token is a 401; without one the
// previews' own rules apply.
func TestTrafficTokenReachesPorts(t *testing.T) {
	ports := &fakePorts{}
	s := New(&fakeSandboxes{}, &authz.Gate{Keys: auth.AdminToken("secret-key")}, Config{TokenSecret: []byte("s"), Ports: ports})
	tok := s.accessToken(auth.Principal{KeyID: "admin", Team: auth.DefaultTeam, Scopes: []auth.Scope{auth.ScopeAdmin}}, "sbx-1")
	req := func(token string) (*http.Request, *httptest.ResponseRecorder, bool) {
		r := httptest.NewRequest("GET", "http://8080-sbx-1.e2b.test/x", nil)
		if token != "" {
			r.Header.Set("e2b-traffic-access-token", token)
		}
		w := httptest.NewRecorder()
		return r, w, s.ServeHost(w, r, "e2b.test")
	}
	r, _, served := req(tok)
	if served || r.Header.Get(network.TokenHeader) != "port-token" || r.Header.Get(trafficHeader) != "" || fmt.Sprint(ports.linked) != "[sbx-1:8080 by admin]" {
		t.Fatalf("with the token: served %v, headers %v, linked %v", served, r.Header, ports.linked)
	}
	if _, w, served := req(tok + "x"); !served || w.Code != 401 {
		t.Fatalf("with a wrong token: served %v %d", served, w.Code)
	}
	if r, _, served := req(""); served || r.Header.Get(network.TokenHeader) != "" || len(ports.linked) != 1 {
		t.Fatalf("without a token: served %v, headers %v", served, r.Header)
	}
}

type fakeVolumes struct {
	names []string
	dir   string // every volume's files
}

func (f *fakeVolumes) ID(ctx context.Context, name string) (string, error) {
	if _, err := f.Get(ctx, name); err != nil {
		return "", err
	}
	return "vol_" + name, nil
}

func (f *fakeVolumes) Files(ctx context.Context, name string) (*volume.Files, error) {
	if _, err := f.Get(ctx, name); err != nil {
		return nil, err
	}
	return volume.OpenFiles(f.dir)
}

func (f *fakeVolumes) Create(_ context.Context, name string, _ int) (*wire.Volume, error) {
	f.names = append(f.names, name)
	return &wire.Volume{Name: name}, nil
}

func (f *fakeVolumes) Get(_ context.Context, name string) (*wire.Volume, error) {
	for _, n := range f.names {
		if n == name {
			return &wire.Volume{Name: n}, nil
		}
	}
	return nil, errdefs.NotFound(wire.CodeVolumeNotFound, "volume %q not found", name)
}

func (f *fakeVolumes) List(context.Context) ([]wire.Volume, error) {
	var out []wire.Volume
	for _, n := range f.names {
		out = append(out, wire.Volume{Name: n})
	}
	return out, nil
}

func (f *fakeVolumes) Delete(_ context.Context, name string) error {
	f.names = slices.DeleteFunc(f.names, func(n string) bool { return n == name })
	return nil
}

func (f *fakeSandboxes) VolumeUsers(context.Context, string) ([]string, error) { return nil, nil }

// TestVolumes: Volume.create/getInfo/list/destroy are sbx volumes, named
// by their sbx name.
func TestVolumes(t *testing.T) {
	vols := &fakeVolumes{}
	s := New(&fakeSandboxes{}, &authz.Gate{Keys: auth.AdminToken("secret-key")}, Config{TokenSecret: []byte("s"), Volumes: vols})
	if w := call(s, "POST", "/e2b/volumes", "secret-key", `{"name":"data"}`); w.Code != 201 || !strings.Contains(w.Body.String(), `"volumeID":"data"`) {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	if w := call(s, "POST", "/e2b/volumes", "secret-key", `{"name":"x","size":1}`); w.Code != 400 || !strings.Contains(w.Body.String(), "size") {
		t.Fatalf("create with an unknown field: %d %s", w.Code, w.Body)
	}
	if w := call(s, "GET", "/e2b/volumes/data", "secret-key", ""); w.Code != 200 || !strings.Contains(w.Body.String(), `"name":"data"`) {
		t.Fatalf("getInfo: %d %s", w.Code, w.Body)
	}
	if w := call(s, "GET", "/e2b/volumes", "secret-key", ""); w.Code != 200 || w.Body.String() != `[{"volumeID":"data","name":"data"}]`+"\n" {
		t.Fatalf("list: %d %q", w.Code, w.Body)
	}
	if w := call(s, "DELETE", "/e2b/volumes/data", "secret-key", ""); w.Code != 204 {
		t.Fatalf("destroy: %d %s", w.Code, w.Body)
	}
	if w := call(s, "DELETE", "/e2b/volumes/data", "secret-key", ""); w.Code != 404 {
		t.Fatalf("destroy of a gone volume: %d %s", w.Code, w.Body)
	}
}

// TestVolumeContent: Volume's file methods take the token Volume.create
// answered, signed for that volume: not a key, not another volume's token,
// not a forged one; each request is the volume file service's.
func TestVolumeContent(t *testing.T) {
	vols := &fakeVolumes{dir: t.TempDir()}
	s := New(&fakeSandboxes{}, &authz.Gate{Keys: auth.AdminToken("secret-key")}, Config{TokenSecret: []byte("s"), Volumes: vols})
	token := func(name string) string {
		w := call(s, "POST", "/e2b/volumes", "secret-key", `{"name":"`+name+`"}`)
		var v volumeJSON
		if w.Code != 201 || json.Unmarshal(w.Body.Bytes(), &v) != nil || v.Token == nil || *v.Token == "" {
			t.Fatalf("create %s: %d %s", name, w.Code, w.Body)
		}
		return *v.Token
	}
	data, other := token("data"), token("other")
	do := func(method, path, tok, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, "/e2b/volumecontent/data"+path, strings.NewReader(body))
		if tok != "" {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w
	}
	for name, tok := range map[string]string{"none": "", "the API key": "secret-key", "another volume's token": other, "a forged token": data + "x"} {
		if w := do("PUT", "/file?path=/f", tok, "x"); w.Code != 401 || !strings.Contains(w.Body.String(), "volume token") {
			t.Errorf("writeFile with %s: %d %s", name, w.Code, w.Body)
		}
	}
	if w := do("PUT", "/file?path=/d/f.txt&mode=384", data, "hello"); w.Code != 404 {
		t.Errorf("writeFile under a missing directory: %d %s", w.Code, w.Body)
	}
	if w := do("POST", "/dir?path=/d&force=true&uid=1000&gid=1000", data, ""); w.Code != 201 || !strings.Contains(w.Body.String(), `"uid":1000`) {
		t.Fatalf("makeDir: %d %s", w.Code, w.Body)
	}
	if w := do("PUT", "/file?path=/d/f.txt&mode=384", data, "hello"); w.Code != 200 || !strings.Contains(w.Body.String(), `"mode":384`) || !strings.Contains(w.Body.String(), `"size":5`) {
		t.Fatalf("writeFile: %d %s", w.Code, w.Body)
	}
	if w := do("PUT", "/file?path=/d/f.txt&force=false", data, "again"); w.Code != 409 {
		t.Errorf("writeFile force=false over a file: %d %s", w.Code, w.Body)
	}
	if w := do("GET", "/file?path=/d/f.txt", data, ""); w.Code != 200 || w.Body.String() != "hello" {
		t.Errorf("readFile: %d %s", w.Code, w.Body)
	}
	if w := do("GET", "/dir?path=/&depth=2", data, ""); w.Code != 200 || !strings.Contains(w.Body.String(), `"path":"/d/f.txt"`) {
		t.Errorf("list: %d %s", w.Code, w.Body)
	}
	if w := do("PATCH", "/path?path=/d/f.txt", data, `{"mode":420,"uid":7}`); w.Code != 200 || !strings.Contains(w.Body.String(), `"mode":420`) || !strings.Contains(w.Body.String(), `"uid":7`) {
		t.Errorf("updateMetadata: %d %s", w.Code, w.Body)
	}
	if w := do("PATCH", "/path?path=/d/f.txt", data, `{"owner":"x"}`); w.Code != 400 || !strings.Contains(w.Body.String(), "owner") {
		t.Errorf("updateMetadata with an unknown field: %d %s", w.Code, w.Body)
	}
	if w := do("GET", "/path?path=/d/f.txt&follow=1", data, ""); w.Code != 400 || !strings.Contains(w.Body.String(), "follow") {
		t.Errorf("getInfo with an unknown parameter: %d %s", w.Code, w.Body)
	}
	if w := do("GET", "/file?path=/../../etc/passwd", data, ""); w.Code != 404 {
		t.Errorf("readFile of ../../etc/passwd (the volume's /etc/passwd): %d %s", w.Code, w.Body)
	}
	if w := do("DELETE", "/path?path=/d", data, ""); w.Code != 204 {
		t.Errorf("remove: %d %s", w.Code, w.Body)
	}
	if w := do("GET", "/path?path=/d", data, ""); w.Code != 404 {
		t.Errorf("getInfo after remove: %d %s", w.Code, w.Body)
	}
}

// fakeSecrets keeps secrets per team, as the Keeper does.
type fakeSecrets struct{ all []wire.SecretInfo }

func (f *fakeSecrets) Create(ctx context.Context, req wire.CreateSecretRequest) (*wire.SecretInfo, error) {
	team := auth.TeamOf(ctx)
	f.all = slices.DeleteFunc(f.all, func(i wire.SecretInfo) bool { return i.Team == team && i.Name == req.Name })
	i := wire.SecretInfo{Name: req.Name, Team: team, Size: len(req.Value), SecretHosts: req.SecretHosts}
	f.all = append(f.all, i)
	return &i, nil
}

func (f *fakeSecrets) List(ctx context.Context) ([]wire.SecretInfo, error) {
	var out []wire.SecretInfo
	for _, i := range f.all {
		if auth.Sees(ctx, i.Team) {
			out = append(out, i)
		}
	}
	return out, nil
}

func (f *fakeSecrets) Delete(ctx context.Context, name string) error {
	team := auth.TeamOf(ctx)
	f.all = slices.DeleteFunc(f.all, func(i wire.SecretInfo) bool { return i.Team == team && i.Name == name })
	return nil
}

// TestSecrets: Secret.* are sbx secrets whose hosts come from the
// metadata; a secret without hosts, and any other metadata, is refused by
// name; another team's secret is not found, even for the admin key.
func TestSecrets(t *testing.T) {
	sec := &fakeSecrets{all: []wire.SecretInfo{{Name: "theirs", Team: "rival", SecretHosts: wire.SecretHosts{Hosts: []string{"x.test"}}}}}
	s := New(&fakeSandboxes{}, &authz.Gate{Keys: auth.AdminToken("secret-key")}, Config{TokenSecret: []byte("s"), Secrets: sec})
	for body, want := range map[string]string{
		`{"name":"k","value":"v"}`:                                                   "metadata: { hosts:",
		`{"name":"k","value":"v","metadata":{"hosts":" "}}`:                          "metadata: { hosts:",
		`{"name":"k","value":"v","metadata":{"hosts":"a.test","team":"x"}}`:          "metadata.team",
		`{"name":"k","value":"v","metadata":{"hosts":"a.test"},"extra":1}`:           "extra",
		`{"name":"k","value":"v","metadata":{"hosts":"a.test","allowHttp":"maybe"}}`: "allowHttp",
	} {
		if w := call(s, "POST", "/e2b/secrets", "secret-key", body); w.Code != 400 || !strings.Contains(w.Body.String(), want) {
			t.Errorf("create %s: %d %s, want a 400 naming %s", body, w.Code, w.Body, want)
		}
	}
	if len(sec.all) != 1 {
		t.Fatalf("a refused create stored a secret: %+v", sec.all)
	}
	w := call(s, "POST", "/e2b/secrets", "secret-key", `{"name":"k","value":"v1","metadata":{"hosts":"api.a.test, *.b.test","allowHttp":"true"}}`)
	if w.Code != 201 || !strings.Contains(w.Body.String(), `"metadata":{"allowHttp":"true","hosts":"api.a.test,*.b.test"}`) || !strings.Contains(w.Body.String(), `"secretID":"k"`) {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	if w := call(s, "POST", "/e2b/secrets", "secret-key", `{"name":"k","value":"v","metadata":{"hosts":"a.test"}}`); w.Code != 409 || !strings.Contains(w.Body.String(), "Secret.update") {
		t.Errorf("create of an existing secret: %d %s", w.Code, w.Body)
	}
	// update without metadata keeps the hosts, with metadata replaces them.
	if w := call(s, "POST", "/e2b/secrets/k", "secret-key", `{"value":"v22"}`); w.Code != 200 || !strings.Contains(w.Body.String(), `api.a.test`) {
		t.Errorf("update: %d %s", w.Code, w.Body)
	}
	if sec.all[1].Size != 3 || sec.all[1].Hosts[0] != "api.a.test" || !sec.all[1].AllowHTTP {
		t.Errorf("after update: %+v", sec.all[1])
	}
	if w := call(s, "POST", "/e2b/secrets/k", "secret-key", `{"value":"v3","metadata":{"hosts":"c.test"}}`); w.Code != 200 || !strings.Contains(w.Body.String(), `"metadata":{"hosts":"c.test"}`) {
		t.Errorf("update with hosts: %d %s", w.Code, w.Body)
	}
	for _, req := range []string{"GET /e2b/secrets/theirs", "POST /e2b/secrets/theirs", "DELETE /e2b/secrets/theirs", "GET /e2b/secrets/nope"} {
		method, path, _ := strings.Cut(req, " ")
		if w := call(s, method, path, "secret-key", `{"value":"x"}`); w.Code != 404 || strings.Contains(w.Body.String(), "rival") {
			t.Errorf("%s: %d %s", req, w.Code, w.Body)
		}
	}
	call(s, "POST", "/e2b/secrets", "secret-key", `{"name":"a","value":"v","metadata":{"hosts":"a.test"}}`)
	w = call(s, "GET", "/e2b/secrets?limit=1", "secret-key", "")
	if w.Code != 200 || w.Header().Get("X-Next-Token") != "a" || !strings.Contains(w.Body.String(), `"name":"a"`) || strings.Contains(w.Body.String(), "theirs") {
		t.Fatalf("list page 1: %d %v %s", w.Code, w.Header(), w.Body)
	}
	w = call(s, "GET", "/e2b/secrets?limit=1&nextToken=a", "secret-key", "")
	if w.Code != 200 || w.Header().Get("X-Next-Token") != "" || !strings.Contains(w.Body.String(), `"name":"k"`) {
		t.Fatalf("list page 2: %d %v %s", w.Code, w.Header(), w.Body)
	}
	if w := call(s, "DELETE", "/e2b/secrets/k", "secret-key", ""); w.Code != 204 {
		t.Errorf("destroy: %d %s", w.Code, w.Body)
	}
	if w := call(s, "DELETE", "/e2b/secrets/k", "secret-key", ""); w.Code != 404 {
		t.Errorf("destroy of a gone secret: %d %s", w.Code, w.Body)
	}
	if len(sec.all) != 2 || sec.all[0].Name != "theirs" {
		t.Errorf("the rival's secret: %+v", sec.all)
	}
}
