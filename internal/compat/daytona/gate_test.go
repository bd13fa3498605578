package daytona

import (
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz/authztest"
)

var routeParam = regexp.MustCompile(`\{([a-z]+)(\.\.\.)?\}`)

// TestEveryRouteGated walks the layer's route table: every route refuses a
// request without a key and one whose key lacks its scope, applies the
// key's rate limit and audits writes. The public routes authenticate
// otherwise: socket.io in its CONNECT (TestSocketConnectGated), previews in
// sbx's preview proxy (internal/api TestPreviewNeedsExec).
func TestEveryRouteGated(t *testing.T) {
	h := authztest.New(t)
	d := New(Config{Sandboxes: &fakeSandboxes{}, Images: fakeImages{}, Gate: h.Gate})
	for _, rt := range d.routes() {
		if rt.public {
			if !strings.Contains(rt.pattern, "/socket.io/") && !strings.HasPrefix(rt.pattern, previewPrefix) {
				t.Errorf("%s is public, but neither socket.io nor a preview", rt.pattern)
			}
			continue
		}
		method, pattern, _ := strings.Cut(rt.pattern, " ")
		path := routeParam.ReplaceAllString(pattern, "x$1")
		h.Check(t, authztest.Op{
			Name: rt.pattern, Need: rt.need, Method: method, Path: path,
			Do: func(key string, _ auth.Principal) int {
				req := httptest.NewRequest(method, path, strings.NewReader("{}"))
				if key != "" {
					req.Header.Set("Authorization", "Bearer "+key)
				}
				rec := httptest.NewRecorder()
				d.ServeHTTP(rec, req)
				return rec.Code
			},
		}, nil)
	}
	// Every socket.io packet a client sends that needs a decision has one.
	if op, ok := socketOps["connect"]; !ok || op.Scope != auth.ScopeSandboxesRead {
		t.Errorf("socket.io connect: %+v", op)
	}
}
