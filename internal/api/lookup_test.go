package api

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/wire"
)

// The GET routes under /v1/sandboxes/{id}/ that read through a running
// instance (onlyRunning), written out independently of the route table:
// reading files needs the instance that mounts them, and a preview serves
// what the sandbox's server answers. Without an instance they answer 409
// SANDBOX_NOT_RUNNING. Every other GET is a lookup or reads the store; no
// GET starts a sandbox.
var getsThroughRunning = []string{
	"/v1/sandboxes/{id}/files", "/v1/sandboxes/{id}/files/list", "/v1/sandboxes/{id}/files/tar",
	"/v1/sandboxes/{id}/files/stat", "/v1/sandboxes/{id}/user", "/v1/sandboxes/{id}/watch", "/v1/sandboxes/{id}/ports/{port}/{path...}",
	"/v1/sandboxes/{id}/desktop/status", "/v1/sandboxes/{id}/desktop/screenshot", "/v1/sandboxes/{id}/desktop/mouse", "/v1/sandboxes/{id}/desktop/windows",
	"/v1/sandboxes/{id}/desktop/recordings", "/v1/sandboxes/{id}/desktop/recordings/{recording}", "/v1/sandboxes/{id}/desktop/recordings/{recording}/file",
}

// Every GET route under /v1/sandboxes/{id}/, taken from the route table, on
// a stopped sandbox: none asks the Manager for an agent that starts it nor
// holds it active; those in getsThroughRunning answer 409
// SANDBOX_NOT_RUNNING, the lookups an empty list or 404
// NOT_IN_CURRENT_INSTANCE. The OpenAPI document says none starts.
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
		if f.agents > 0 {
			t.Errorf("GET %s on a stopped sandbox starts it (%d %s)", rt.pattern, rec.Code, rec.Body)
		}
		if f.holds > 0 {
			t.Errorf("GET %s counts as activity on a stopped sandbox", rt.pattern)
		}
		docPath := pathParamRe.ReplaceAllString(rt.pattern, "{$1}")
		if got := doc[docPath]["get"].(map[string]any)["x-starts-instance"]; got != false {
			t.Errorf("GET %s: x-starts-instance is %v, want false", rt.pattern, got)
		}
		if slices.Contains(getsThroughRunning, rt.pattern) != rt.onlyRunning {
			t.Errorf("GET %s: onlyRunning is %v in the route table", rt.pattern, rt.onlyRunning)
		}
		if rt.onlyRunning && !rt.public { // previews: no networking here
			wantError(t, rec, http.StatusConflict, wire.CodeSandboxNotRunning)
		}
		if !rt.lookup {
			continue
		}
		_, cmds := rt.response.([]wire.SessionCommand) // a session's, like processes: none without an instance
		if _, list := rt.response.([]wire.Process); list || cmds || strings.Count(rt.pattern, "{") == 1 {
			if rec.Code != http.StatusOK || strings.TrimSpace(rec.Body.String()) != "[]" {
				t.Errorf("GET %s on a stopped sandbox: %d %s, want 200 []", rt.pattern, rec.Code, rec.Body)
			}
			continue
		}
		wantError(t, rec, http.StatusNotFound, wire.CodeNotInCurrentInstance)
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
