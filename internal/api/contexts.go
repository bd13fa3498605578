package api

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/sdk"
)

// runCode forwards a code run (in a context, or stateless) to the agent. A
// streamed run that breaks before its "end" event gets an explicit error
// event, so a client never mistakes a lost instance for a finished run.
func (s *Server) runCode(w http.ResponseWriter, r *http.Request) {
	stream, err := httpjson.BoolParam(r, "stream")
	if err != nil {
		writeError(w, r, err)
		return
	}
	if !stream {
		s.proxy(w, r)
		return
	}
	client, _, err := s.sandboxes.Agent(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/v1/sandboxes/"+r.PathValue("id"))
	req, err := http.NewRequestWithContext(r.Context(), "POST", "http://agent"+path+"?stream=true", http.MaxBytesReader(w, r.Body, httpjson.MaxBody))
	if err != nil {
		writeError(w, r, errdefs.Internal(err, "build agent request"))
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Transport().RoundTrip(req)
	if err != nil {
		writeError(w, r, agentLost(err))
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		copyResponse(w, resp) // an error before the run began, as it is
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 128<<20) // a result line can carry a large image
	ended := false
	for sc.Scan() {
		line := sc.Bytes()
		var ev struct{ Type string }
		if json.Unmarshal(line, &ev) == nil && ev.Type == "end" {
			ended = true
		}
		w.Write(line)
		w.Write([]byte("\n"))
		if flusher != nil {
			flusher.Flush()
		}
	}
	if !ended && r.Context().Err() == nil {
		json.NewEncoder(w).Encode(sdk.RunEvent{Type: "error", Error: &sdk.CodeError{
			Code: sdk.CodeInstanceLost, Message: "the stream from the sandbox ended before the run did: the instance stopped or crashed"}})
	}
}
