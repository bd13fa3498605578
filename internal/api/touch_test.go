package api

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/wire"
)

func doTouch(s *Server, method, path, header string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(`{"cmd":["true"]}`))
	req.Header.Set("Authorization", "Bearer "+testKey)
	if header != "" {
		req.Header.Set(CreateIfMissingHeader, header)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}

// Off by default an unknown name is 404 and nothing is created; the header
// or the daemon's setting creates it through Ensure, only for a name, only
// on routes that start an instance.
func TestCreateOnTouch(t *testing.T) {
	s, f := newTestServer(t)
	wantError(t, doTouch(s, "POST", "/v1/sandboxes/ghost/exec", ""), http.StatusNotFound, wire.CodeSandboxNotFound)
	wantError(t, doTouch(s, "POST", "/v1/sandboxes/ghost/exec", "false"), http.StatusNotFound, wire.CodeSandboxNotFound)
	wantError(t, doTouch(s, "POST", "/v1/sandboxes/ghost/exec", "maybe"), http.StatusBadRequest, wire.CodeInvalidParameter)
	if len(f.ensured) != 0 {
		t.Fatalf("created without being asked: %v", f.ensured)
	}

	f.holds, f.ensureCreates = 0, true
	doTouch(s, "POST", "/v1/sandboxes/ghost/exec", "true")
	if !slices.Equal(f.ensured, []string{"ghost"}) {
		t.Fatalf("with the header: Ensure got %v, want [ghost]", f.ensured)
	}
	if f.holds != 2 { // the request's, which found nothing, and the new sandbox's
		t.Errorf("the call on the created sandbox held it %d times, want 2", f.holds)
	}

	f.ensured = nil
	s.SetCreateOnTouch(true)
	doTouch(s, "PUT", "/v1/sandboxes/other/files?path=/a", "")
	doTouch(s, "POST", "/v1/sandboxes/sbx-0123/exec", "")     // an id is never created
	doTouch(s, "GET", "/v1/sandboxes/lookup/processes", "")   // a lookup never creates
	doTouch(s, "POST", "/v1/sandboxes/sb1/exec", "")          // it exists
	doTouch(s, "GET", "/v1/sandboxes/events-only/events", "") // not a toolbox call
	if !slices.Equal(f.ensured, []string{"other"}) {
		t.Fatalf("with --create-on-touch: Ensure got %v, want [other]", f.ensured)
	}
}
