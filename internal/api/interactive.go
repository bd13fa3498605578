package api

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/sdk"
)

// Background processes, sessions, terminals and watches: their routes are
// rows in routes.go, most of them plain s.proxy rows, since the agent serves
// each under the same path without the /v1/sandboxes/{id} prefix. Terminal
// attach is a WebSocket, which s.proxy passes through (httputil.ReverseProxy
// handles the Upgrade and copies both ways). Streams go through streamProxy.

// pathParamDocs describes path parameters other than the sandbox's {id}
// in the OpenAPI document.
var pathParamDocs = map[string]string{
	"process": "background process id",
	"session": "session id",
	"pty":     "terminal id",
}

// streamProxy forwards a toolbox request whose answer may be an NDJSON
// stream. Every such stream of the agent ends with a final event ("exit",
// "end" or "error"); one that breaks before it (the instance died) gets an
// explicit error event, so a client never mistakes a lost instance for the
// end. Other answers pass through as they are.
func (s *Server) streamProxy(w http.ResponseWriter, r *http.Request) {
	client, _, err := s.sandboxes.Agent(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	u := "http://agent" + strings.TrimPrefix(r.URL.Path, "/v1/sandboxes/"+r.PathValue("id"))
	if r.URL.RawQuery != "" {
		u += "?" + r.URL.RawQuery
	}
	var body io.Reader // none for a GET, or it would go out chunked
	if r.ContentLength != 0 {
		body = http.MaxBytesReader(w, r.Body, httpjson.MaxBody)
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, u, body)
	if err != nil {
		writeError(w, r, errdefs.Internal(err, "build agent request"))
		return
	}
	req.ContentLength = r.ContentLength
	if ct := r.Header.Get("Content-Type"); ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	resp, err := client.Transport().RoundTrip(req)
	if err != nil {
		writeError(w, r, agentLost(err))
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/x-ndjson") {
		copyResponse(w, resp)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	rc.Flush()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	final := false
	for sc.Scan() {
		line := sc.Bytes()
		var ev struct{ Type string }
		if json.Unmarshal(line, &ev) == nil {
			final = ev.Type == "exit" || ev.Type == "end" || ev.Type == "error"
		}
		w.Write(line)
		w.Write([]byte("\n"))
		rc.Flush()
	}
	if !final && r.Context().Err() == nil {
		json.NewEncoder(w).Encode(sdk.ExecEvent{Type: "error", Error: &sdk.ErrorBody{
			Code: sdk.CodeInstanceLost, Message: "the stream from the sandbox broke off: the instance stopped or crashed"}})
	}
}
