package e2b

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/network"
	"github.com/sbxhq/sbx/internal/store"
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
// 400 naming the SDK methods that call it, with or without a key (the
// volume content API sends a volume token); the routes sbx serves beside
// them still answer.
func TestRefusedAPIsNameTheirMethods(t *testing.T) {
	s := newTestServer(&fakeSandboxes{})
	for req, want := range map[string]string{
		"PUT /e2b/volumecontent/v1/file":       "writeFile",
		"GET /e2b/secrets":                     "Secret.list",
		"DELETE /e2b/secrets/k":                "Secret.destroy",
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

// TestSignedURLRefused: a request with uploadUrl/downloadUrl's signature
// and no access token is refused naming them.
func TestSignedURLRefused(t *testing.T) {
	s := newTestServer(&fakeSandboxes{})
	r := httptest.NewRequest("GET", "/e2b/sandbox/files?path=/a&signature=v1_x", nil)
	r.Header.Set("E2b-Sandbox-Id", "sbx-0")
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	if w.Code != 401 || !strings.Contains(w.Body.String(), "uploadUrl, downloadUrl") {
		t.Fatalf("signed URL: %d %s", w.Code, w.Body)
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

type fakeVolumes struct{ names []string }

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
