package agent

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/wire"
)

// A resource's handle addresses it; a handle with another instance's tag
// is refused with STALE_HANDLE, never resolved to the id it names, for
// every kind of resource the agent hands out.
func TestHandlesOfAnotherInstanceFailClosed(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	p := a.startProc(wire.StartProcessRequest{ID: "web", Cmd: []string{"sleep", "60"}})
	if p.Handle != "web@"+instanceTag {
		t.Fatalf("handle of process web: %q, want web@%s", p.Handle, instanceTag)
	}
	var got wire.Process
	a.call("GET", "/processes/"+p.Handle, nil, http.StatusOK, &got)
	if got.ID != "web" || got.Handle != p.Handle {
		t.Fatalf("get by handle: %+v", got)
	}
	stale := "web@" + strings.Repeat("0", len(instanceTag))
	for _, path := range []string{"/processes/" + stale, "/processes/" + stale + "/wait", "/sessions/" + stale, "/ptys/" + stale, "/contexts/" + stale} {
		method := "GET"
		if strings.HasSuffix(path, "/wait") {
			method = "POST"
		}
		a.callErr(method, path, nil, http.StatusNotFound, wire.CodeStaleHandle)
	}
	a.callErr("DELETE", "/processes/"+stale, nil, http.StatusNotFound, wire.CodeStaleHandle)
	a.call("GET", "/processes/web", nil, http.StatusOK, &got) // the stale delete killed nothing
	if got.State != wire.ProcessRunning {
		t.Fatalf("process web after a stale delete: %+v", got)
	}

	var ss wire.Session
	a.call("POST", "/sessions", wire.CreateSessionRequest{ID: "s"}, http.StatusCreated, &ss)
	if ss.Handle != "s@"+instanceTag {
		t.Fatalf("session handle %q", ss.Handle)
	}
	a.call("GET", "/sessions/"+ss.Handle, nil, http.StatusOK, &ss)
}
