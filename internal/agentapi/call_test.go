package agentapi

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

func TestExpand(t *testing.T) {
	if got := RunContext.Expand("c1"); got != "/contexts/c1/run" {
		t.Fatalf("RunContext.Expand = %q", got)
	}
	if got := GetProcess.Expand("../x/y"); got != "/processes/..%2Fx%2Fy" {
		t.Fatalf("a hostile id is not escaped into one segment: %q", got)
	}
	if got := Health.Expand(); got != "/healthz" {
		t.Fatalf("Health.Expand = %q", got)
	}
	for _, bad := range [][]string{nil, {"a", "b"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RunContext.Expand(%q) did not panic", bad)
				}
			}()
			RunContext.Expand(bad...)
		}()
	}
}

func TestWebSocketURL(t *testing.T) {
	got := WebSocketURL(AttachPTY, Params{Path: []string{"a/b"}, Query: url.Values{"replay": {"true"}}})
	if got != "ws://agent/ptys/a%2Fb/attach?replay=true" {
		t.Fatalf("WebSocketURL = %q", got)
	}
}

// Call fills the path, sends the JSON body and query, and decodes the answer.
func TestCallRoundTrip(t *testing.T) {
	c := fakeAgent(t, func(w http.ResponseWriter, r *http.Request) {
		var in map[string]string
		json.NewDecoder(r.Body).Decode(&in)
		json.NewEncoder(w).Encode(map[string]string{"path": r.URL.EscapedPath(), "q": r.URL.Query().Get("k"), "in": in["x"]})
	})
	out, err := Call[map[string]string](t.Context(), c, RunContext, Params{Path: []string{"c 1"}, Query: url.Values{"k": {"v"}}}, map[string]string{"x": "y"})
	if err != nil {
		t.Fatal(err)
	}
	if out["path"] != "/contexts/c%201/run" || out["q"] != "v" || out["in"] != "y" {
		t.Fatalf("Call sent %v", out)
	}
}

// An answer over the route's limit is refused with a code, not truncated;
// an error answer comes back as the agent's code.
func TestCallBoundsAndErrors(t *testing.T) {
	c := fakeAgent(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == Health.Path {
			w.Write([]byte(`"` + strings.Repeat("x", MaxAnswer+10) + `"`))
			return
		}
		w.WriteHeader(http.StatusNotFound)
		json.NewEncoder(w).Encode(wire.ErrorResponse{Error: wire.ErrorBody{Code: wire.CodeContextNotFound, Message: "no such file"}})
	})
	if _, err := Call[string](t.Context(), c, Health, Params{}, nil); errdefs.CodeOf(err) != wire.CodeAgentResponseTooLarge {
		t.Fatalf("an oversized answer gave %v", err)
	}
	_, err := Call[None](t.Context(), c, StatFile, Params{}, nil)
	if errdefs.CodeOf(err) != wire.CodeContextNotFound || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("an error answer gave %v", err)
	}
}
