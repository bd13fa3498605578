package ui

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/auth/keys/keystest"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

const goodKey = "sbx_test_key_0123456789"

// keys accepts goodKey as a team-a key with read and write scopes, and
// "admin" as the admin key; revoked keys are refused.
type keys struct{ revoked map[string]bool }

func (k *keys) Authenticate(_ context.Context, key string) (auth.Principal, error) {
	if k.revoked[key] {
		return auth.Principal{}, errdefs.Unauthorized(wire.CodeUnauthorized, "revoked")
	}
	switch key {
	case goodKey:
		return auth.Principal{KeyID: "k1", Team: "a", Scopes: []auth.Scope{auth.ScopeSandboxesRead, auth.ScopeSandboxesWrite}}, nil
	case "admin":
		return auth.Admin, nil
	}
	return auth.Principal{}, errdefs.Unauthorized(wire.CodeUnauthorized, "wrong API key")
}

// sandboxes has one sandbox of team a and one of team b.
type sandboxes struct{}

func (sandboxes) all() []*store.Sandbox {
	return []*store.Sandbox{{ID: "sbx-a", Team: "a", State: "started"}, {ID: "sbx-b", Team: "b", State: "started"}}
}

func (s sandboxes) List(ctx context.Context, f store.Filter) ([]*store.Sandbox, error) {
	var out []*store.Sandbox
	for _, sb := range s.all() {
		if auth.Sees(ctx, sb.Team) && (f.State == "" || f.State == string(sb.State)) {
			out = append(out, sb)
		}
	}
	return out, nil
}

func (s sandboxes) Get(ctx context.Context, id string) (*store.Sandbox, error) {
	list, _ := s.List(ctx, store.Filter{})
	for _, sb := range list {
		if sb.ID == id {
			return sb, nil
		}
	}
	return nil, errdefs.NotFound(wire.CodeSandboxNotFound, "no sandbox %s", id)
}

// apiRecorder stands for the API server: it notes what reached it.
type apiRecorder struct{ got []*http.Request }

func (a *apiRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.got = append(a.got, r)
	w.WriteHeader(http.StatusOK)
	w.Write([]byte(`[]`))
}

type fixture struct {
	ui   *UI
	api  *apiRecorder
	keys *keys
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{api: &apiRecorder{}, keys: &keys{revoked: map[string]bool{}}}
	f.ui = New(Config{API: f.api, Gate: &authz.Gate{Keys: f.keys}, Sandboxes: sandboxes{}, Usage: fixedUsage(0, 1<<20)})
	return f
}

func (f *fixture) do(method, path, body string, hdr map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, "http://dash.test"+path, strings.NewReader(body))
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	f.ui.ServeHTTP(w, r)
	return w
}

// login returns the session cookie and CSRF token of a login with key.
func (f *fixture) login(t *testing.T, key string) (cookie, csrf string) {
	t.Helper()
	w := f.do("POST", "/ui/login", `{"key":"`+key+`"}`, map[string]string{"Content-Type": "application/json", "Origin": "http://dash.test"})
	if w.Code != 200 {
		t.Fatalf("login: %d %s", w.Code, w.Body)
	}
	var info SessionInfo
	json.Unmarshal(w.Body.Bytes(), &info)
	c := w.Result().Cookies()
	if len(c) != 1 || c[0].Name != CookieName || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode || c[0].Path != "/ui/" {
		t.Fatalf("session cookie: %+v", c)
	}
	if strings.Contains(c[0].Value, key) || strings.Contains(w.Body.String(), key) {
		t.Fatal("the login answer carries the key")
	}
	return CookieName + "=" + c[0].Value, info.CSRF
}

func TestLoginRefusesWrongKeyAndForeignOrigin(t *testing.T) {
	f := newFixture(t)
	if w := f.do("POST", "/ui/login", `{"key":"nope"}`, map[string]string{"Origin": "http://dash.test"}); w.Code != 401 || len(w.Result().Cookies()) != 0 {
		t.Fatalf("wrong key: %d, cookies %v", w.Code, w.Result().Cookies())
	}
	if w := f.do("POST", "/ui/login", `{"key":"`+goodKey+`"}`, map[string]string{"Origin": "http://evil.test"}); w.Code != 403 {
		t.Fatalf("login from another origin: %d", w.Code)
	}
	if w := f.do("POST", "/ui/login", `{"key":1}`, nil); w.Code != 400 {
		t.Fatalf("bad body: %d", w.Code)
	}
	if f.ui.sessions.count() != 0 {
		t.Fatal("a refused login made a session")
	}
}

func TestCookieIsSecureOverTLS(t *testing.T) {
	f := newFixture(t)
	r := httptest.NewRequest("POST", "https://dash.test/ui/login", strings.NewReader(`{"key":"`+goodKey+`"}`))
	r.Header.Set("Origin", "https://dash.test")
	w := httptest.NewRecorder()
	f.ui.ServeHTTP(w, r)
	if c := w.Result().Cookies(); w.Code != 200 || len(c) != 1 || !c[0].Secure {
		t.Fatalf("login over TLS: %d %+v", w.Code, c)
	}
}

func TestFormLoginRedirectsWithoutKeyInURL(t *testing.T) {
	f := newFixture(t)
	w := f.do("POST", "/ui/login", "key="+goodKey, map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/ui/" || len(w.Result().Cookies()) != 1 {
		t.Fatalf("form login: %d %q", w.Code, w.Header().Get("Location"))
	}
	w = f.do("POST", "/ui/login", "key=wrong", map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if loc := w.Header().Get("Location"); w.Code != http.StatusSeeOther || strings.Contains(loc, "wrong") {
		t.Fatalf("failed form login: %d %q", w.Code, loc)
	}
}

func TestEndpointsRefuseWithoutSession(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{"/ui/session", "/ui/api/v1/sandboxes", "/ui/stats", "/ui/stats/sbx-a", "/ui/system"} {
		if w := f.do("GET", p, "", nil); w.Code != 401 {
			t.Errorf("GET %s without a session: %d", p, w.Code)
		}
		if w := f.do("GET", p, "", map[string]string{"Cookie": CookieName + "=forged"}); w.Code != 401 {
			t.Errorf("GET %s with a forged session: %d", p, w.Code)
		}
	}
	if w := f.do("POST", "/ui/logout", "", nil); w.Code != 401 {
		t.Errorf("logout without a session: %d", w.Code)
	}
	if len(f.api.got) != 0 {
		t.Fatal("a request without a session reached the API")
	}
	// The page itself and its assets need no session.
	for _, p := range []string{"/ui/", "/ui/assets/app.js", "/ui/assets/app.css"} {
		if w := f.do("GET", p, "", nil); w.Code != 200 {
			t.Errorf("GET %s: %d", p, w.Code)
		}
	}
}

func TestProxyNeedsCSRFAndPassesTheKey(t *testing.T) {
	f := newFixture(t)
	cookie, csrf := f.login(t, goodKey)
	if w := f.do("GET", "/ui/api/v1/sandboxes", "", map[string]string{"Cookie": cookie}); w.Code != 403 {
		t.Fatalf("without the CSRF header: %d", w.Code)
	}
	if w := f.do("DELETE", "/ui/api/v1/sandboxes/x", "", map[string]string{"Cookie": cookie, CSRFHeader: csrf, "Origin": "http://evil.test"}); w.Code != 403 {
		t.Fatalf("from another origin: %d", w.Code)
	}
	if w := f.do("GET", "/ui/api/v1/sandboxes/x/ptys/p/attach", "", map[string]string{"Cookie": cookie, "Upgrade": "websocket"}); w.Code != 403 {
		t.Fatalf("a WebSocket without Origin: %d", w.Code)
	}
	if len(f.api.got) != 0 {
		t.Fatal("a refused request reached the API")
	}
	w := f.do("GET", "/ui/api/v1/sandboxes?state=started", "", map[string]string{"Cookie": cookie + "; other=1", CSRFHeader: csrf})
	if w.Code != 200 || len(f.api.got) != 1 {
		t.Fatalf("proxied: %d, %d requests", w.Code, len(f.api.got))
	}
	in := f.api.got[0]
	if in.URL.Path != "/v1/sandboxes" || in.URL.RawQuery != "state=started" || in.Header.Get("Authorization") != "Bearer "+goodKey {
		t.Fatalf("the API got %s %q auth %q", in.URL.Path, in.URL.RawQuery, in.Header.Get("Authorization"))
	}
	if in.Header.Get("Cookie") != "" || in.Header.Get(CSRFHeader) != "" {
		t.Fatal("the browser's cookie or CSRF token was passed on")
	}
	ws := f.do("GET", "/ui/api/v1/sandboxes/x/ptys/p/attach", "", map[string]string{"Cookie": cookie, "Upgrade": "websocket", "Origin": "http://dash.test"})
	if ws.Code != 200 || len(f.api.got) != 2 {
		t.Fatalf("same-origin WebSocket: %d", ws.Code)
	}
	for _, p := range []string{"/ui/api/metrics", "/ui/api/healthz", "/ui/api/ui/session", "/ui/api/v1x", "/ui/api/v1/sandboxes/x/ports/8080/", "/ui/api/v1/sandboxes/x/ports/8080/a/b"} {
		if w := f.do("GET", p, "", map[string]string{"Cookie": cookie, CSRFHeader: csrf}); w.Code != 404 {
			t.Errorf("GET %s: %d, want 404", p, w.Code)
		}
	}
}

func TestLogoutAndRevocationEndTheSession(t *testing.T) {
	f := newFixture(t)
	cookie, csrf := f.login(t, goodKey)
	h := map[string]string{"Cookie": cookie, CSRFHeader: csrf}
	if w := f.do("GET", "/ui/session", "", map[string]string{"Cookie": cookie}); w.Code != 200 || !strings.Contains(w.Body.String(), csrf) {
		t.Fatalf("session: %d %s", w.Code, w.Body)
	}
	if w := f.do("POST", "/ui/logout", "", h); w.Code != 204 {
		t.Fatalf("logout: %d", w.Code)
	}
	if w := f.do("GET", "/ui/api/v1/sandboxes", "", h); w.Code != 401 {
		t.Fatalf("after logout: %d", w.Code)
	}
	cookie, csrf = f.login(t, goodKey)
	f.keys.revoked[goodKey] = true
	if w := f.do("GET", "/ui/api/v1/sandboxes", "", map[string]string{"Cookie": cookie, CSRFHeader: csrf}); w.Code != 401 {
		t.Fatalf("after revocation: %d", w.Code)
	}
	if f.ui.sessions.count() != 0 || len(f.api.got) != 0 {
		t.Fatal("a revoked key's session lives on")
	}
}

func TestSessionsExpire(t *testing.T) {
	s := newSessions(time.Minute, time.Hour, 2)
	now := time.Unix(1000, 0)
	s.nowFunc = func() time.Time { return now }
	id, _ := s.create("k")
	req := func() *http.Request {
		r := httptest.NewRequest("GET", "/ui/session", nil)
		r.AddCookie(&http.Cookie{Name: CookieName, Value: id})
		return r
	}
	now = now.Add(59 * time.Second)
	if _, ok := s.get(req()); !ok {
		t.Fatal("a used session ended early")
	}
	now = now.Add(61 * time.Second)
	if _, ok := s.get(req()); ok {
		t.Fatal("an idle session lives on")
	}
	s.create("a")
	s.create("b")
	s.create("c")
	if s.count() != 2 {
		t.Fatalf("%d sessions, want at most 2", s.count())
	}
}

func TestStatsAreScopedToTheTeam(t *testing.T) {
	f := newFixture(t)
	f.ui.history.SampleOnce(context.Background(), time.Unix(1000, 0))
	cookie, csrf := f.login(t, goodKey)
	h := map[string]string{"Cookie": cookie, CSRFHeader: csrf}
	w := f.do("GET", "/ui/stats", "", h)
	var latest map[string]Sample
	json.Unmarshal(w.Body.Bytes(), &latest)
	if _, ok := latest["sbx-a"]; w.Code != 200 || !ok || len(latest) != 1 {
		t.Fatalf("stats: %d %s", w.Code, w.Body)
	}
	if w := f.do("GET", "/ui/stats/sbx-b", "", h); w.Code != 404 {
		t.Fatalf("another team's history: %d", w.Code)
	}
	if w := f.do("GET", "/ui/stats/sbx-a", "", h); w.Code != 200 || !strings.Contains(w.Body.String(), `"mem":1048576`) {
		t.Fatalf("history: %d %s", w.Code, w.Body)
	}
	if w := f.do("GET", "/ui/system", "", h); w.Code != 403 {
		t.Fatalf("system for a non-admin key: %d", w.Code)
	}
}

// A dashboard session dies with its API key, checked against the real key
// service at every request.
func TestSessionDiesWithItsKey(t *testing.T) {
	svc := keystest.New(t)
	f := &fixture{api: &apiRecorder{}}
	f.ui = New(Config{API: f.api, Gate: &authz.Gate{Keys: svc}, Sandboxes: sandboxes{}, Usage: fixedUsage(0, 1<<20)})
	p, key := keystest.Key(t, svc, wire.ScopeSandboxesRead)
	cookie, csrf := f.login(t, key)
	h := map[string]string{"Cookie": cookie, CSRFHeader: csrf}
	if w := f.do("GET", "/ui/api/v1/sandboxes", "", h); w.Code != 200 {
		t.Fatalf("live key: %d %s", w.Code, w.Body)
	}
	keystest.Revoke(t, svc, p)
	if w := f.do("GET", "/ui/api/v1/sandboxes", "", h); w.Code != 401 {
		t.Fatalf("after revocation: %d", w.Code)
	}
	if w := f.do("GET", "/ui/session", "", map[string]string{"Cookie": cookie}); w.Code != 401 {
		t.Fatalf("session after revocation: %d", w.Code)
	}
}
