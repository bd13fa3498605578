package api

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httputil"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/sdk"
)

// proxy forwards a toolbox request to the sandbox's agent, streaming the body
// both ways: /v1/sandboxes/{id}/files/list becomes /files/list.
func (s *Server) proxy(w http.ResponseWriter, r *http.Request) {
	client, _, err := s.sandboxes.Agent(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	prefix := "/v1/sandboxes/" + r.PathValue("id")
	rp := &httputil.ReverseProxy{
		Transport:     client.Transport(),
		FlushInterval: -1,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = "http"
			pr.Out.URL.Host = "agent"
			pr.Out.Host = "agent"
			pr.Out.URL.Path = strings.TrimPrefix(r.URL.Path, prefix)
			pr.Out.URL.RawPath = ""
			pr.Out.Header.Del("Authorization")
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			writeError(w, r, agentLost(err))
		},
	}
	rp.ServeHTTP(w, r)
}

// agentLost is the error for a toolbox call whose agent went away.
func agentLost(err error) error {
	return &errdefs.Error{Kind: errdefs.KindUnavailable, Code: sdk.CodeSandboxUnavailable,
		Message: "the sandbox's instance did not answer; it may be stopping or have crashed: check its state and retry", Err: err}
}

// exec runs a command. A stream that breaks before the command's exit event
// ends with an explicit error event, so a client never mistakes a lost
// instance for an exit.
func (s *Server) exec(w http.ResponseWriter, r *http.Request) {
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
	req, err := http.NewRequestWithContext(r.Context(), "POST", "http://agent/exec?stream=true", http.MaxBytesReader(w, r.Body, httpjson.MaxBody))
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
		// An error before the stream started: pass it on as it is.
		copyResponse(w, resp)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	exited := false
	for sc.Scan() {
		line := sc.Bytes()
		var ev struct{ Type string }
		if json.Unmarshal(line, &ev) == nil && (ev.Type == "exit" || ev.Type == "error") {
			exited = true
		}
		w.Write(line)
		w.Write([]byte("\n"))
		if flusher != nil {
			flusher.Flush()
		}
	}
	if !exited && r.Context().Err() == nil {
		json.NewEncoder(w).Encode(sdk.ExecEvent{Type: "error", Error: &sdk.ErrorBody{
			Code: sdk.CodeInstanceLost, Message: "the stream from the sandbox ended before the command exited: the instance stopped or crashed"}})
	}
}

func copyResponse(w http.ResponseWriter, resp *http.Response) {
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	bufio.NewReader(resp.Body).WriteTo(w)
}
