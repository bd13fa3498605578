package ui

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz/authztest"
)

var routeParam = regexp.MustCompile(`\{([a-z]+)\}`)

// TestEveryRouteGated walks the dashboard's session routes and its login:
// each refuses a request without a session (or key), one whose key lacks
// its scope, applies the key's rate limit and audits writes. The proxy's
// calls are the API's own routes (internal/api TestEveryRouteGated).
func TestEveryRouteGated(t *testing.T) {
	h := authztest.New(t)
	u := New(Config{API: &apiRecorder{}, Gate: h.Gate, Sandboxes: sandboxes{}, Usage: fixedUsage(0, 1<<20)})
	for _, rt := range u.sessionRoutes() {
		if rt.need == nil {
			if rt.pattern != "/ui/api/" {
				t.Errorf("%s leaves its decision to the API but is not the API proxy", rt.pattern)
			}
			continue
		}
		method, pattern, ok := strings.Cut(rt.pattern, " ")
		if !ok {
			t.Fatalf("%s names no method", rt.pattern)
		}
		path := routeParam.ReplaceAllString(pattern, "x$1")
		h.Check(t, authztest.Op{
			Name: rt.pattern, Need: *rt.need, Method: method, Path: path,
			Do: func(key string, _ auth.Principal) int {
				r := httptest.NewRequest(method, "http://dash.test"+path, nil)
				if key != "" {
					id, sess := u.sessions.create(key) // logged in before (login: below)
					r.AddCookie(&http.Cookie{Name: CookieName, Value: id})
					r.Header.Set(CSRFHeader, sess.csrf)
				}
				w := httptest.NewRecorder()
				u.ServeHTTP(w, r)
				return w.Code
			},
		}, nil)
	}
	h.Check(t, authztest.Op{
		Name: "POST /ui/login", Need: loginOp, Method: "POST", Path: "/ui/login",
		Do: func(key string, _ auth.Principal) int {
			r := httptest.NewRequest("POST", "http://dash.test/ui/login", strings.NewReader(`{"key":"`+key+`"}`))
			r.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			u.ServeHTTP(w, r)
			return w.Code
		},
	}, nil)
}
