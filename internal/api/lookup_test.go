package api

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/sdk"
)

// The GET routes under /v1/sandboxes/{id}/ that start a stopped sandbox
// (and resume a paused one), written out independently of the route
// table: reading files needs the instance that mounts them, and a preview
// serves what the sandbox's server answers. Every other GET is a lookup or
// reads the store.
var getsThatStart = []string{
	"/v1/sandboxes/{id}/files", "/v1/sandboxes/{id}/files/list", "/v1/sandboxes/{id}/files/tar",
	"/v1/sandboxes/{id}/files/stat", "/v1/sandboxes/{id}/watch", "/v1/sandboxes/{id}/ports/{port}/{path...}",
}

// Every GET route under /v1/sandboxes/{id}/, taken from the route table, on
// a stopped sandbox: only those in getsThatStart ask the Manager for an
// agent that starts it; the others neither start it nor hold it active,
// and the lookups among them answer an empty list or 404
// NOT_IN_CURRENT_INSTANCE. The OpenAPI document says which start.
func TestGetRoutesOnAStoppedSandboxDoNotStartIt(t *testing.T) {
	s, f := newTestServer(t)
	f.stopped = true
	doc := s.Document()["paths"].(map[string]map[string]any)
	n := 0
	for _, rt := range s.routes() {
		if rt.method != "GET" || !strings.HasPrefix(rt.pattern, sandboxSubPrefix) {
			continue
		}
		n++
		f.agents, f.holds = 0, 0
		rec := do(s, "GET", samplePath(rt.pattern), testKey, "")
		wantStart := slices.Contains(getsThatStart, rt.pattern)
		if started := f.agents > 0; !rt.public && started != wantStart { // previews: no networking here
			t.Errorf("GET %s on a stopped sandbox: starts it %v, want %v (%d %s)", rt.pattern, started, wantStart, rec.Code, rec.Body)
		}
		if !wantStart && f.holds > 0 {
			t.Errorf("GET %s counts as activity on a stopped sandbox", rt.pattern)
		}
		docPath := pathParamRe.ReplaceAllString(rt.pattern, "{$1}")
		if got := doc[docPath]["get"].(map[string]any)["x-starts-instance"]; got != wantStart {
			t.Errorf("GET %s: x-starts-instance is %v, want %v", rt.pattern, got, wantStart)
		}
		if !rt.lookup {
			continue
		}
		if _, list := rt.response.([]sdk.Process); list || strings.Count(rt.pattern, "{") == 1 {
			if rec.Code != http.StatusOK || strings.TrimSpace(rec.Body.String()) != "[]" {
				t.Errorf("GET %s on a stopped sandbox: %d %s, want 200 []", rt.pattern, rec.Code, rec.Body)
			}
			continue
		}
		wantError(t, rec, http.StatusNotFound, sdk.CodeNotInCurrentInstance)
	}
	if n < 20 {
		t.Fatalf("only %d GET routes under %s: the table lost them", n, sandboxSubPrefix)
	}
}

// On a started sandbox a lookup reaches the agent it has, without
// starting anything.
func TestLookupOnAStartedSandboxAsksOnlyForARunningAgent(t *testing.T) {
	s, f := newTestServer(t)
	rec := do(s, "GET", "/v1/sandboxes/sb1/processes/web", testKey, "")
	if f.agents != 0 || f.lookups != 1 {
		t.Fatalf("Agent called %d times, AgentIfRunning %d; want 0 and 1 (%d %s)", f.agents, f.lookups, rec.Code, rec.Body)
	}
}
