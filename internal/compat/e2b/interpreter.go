package e2b

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/sdk"
)

// The code interpreter (E2B's port 49999) over sbx's code contexts:
// POST /execute streams NDJSON (stdout, stderr, result, error,
// number_of_executions); /contexts creates, lists, deletes and restarts.
//
// E2B names a context by an id that survives a restart; sbx's restart is a
// new interpreter with a new id. contextNames keeps E2B's names (the sbx id
// the context was first created with) → the current sbx context, per
// sandbox, plus each language's default context. It is in memory: after a
// daemon restart the interpreters are gone anyway (a context lives in one
// instance), and /execute makes a new default context.
type contextNames struct {
	mu       sync.Mutex
	current  map[string]string // sandbox/e2bID → sbx context id
	language map[string]string // sandbox/e2bID → language
	defaults map[string]string // sandbox/language → e2bID
	runs     map[string]int    // sandbox/e2bID → executions so far
}

// lock locks c, making its maps on first use.
func (c *contextNames) lock() {
	c.mu.Lock()
	if c.current == nil {
		c.current, c.language, c.defaults, c.runs = map[string]string{}, map[string]string{}, map[string]string{}, map[string]int{}
	}
}

func (c *contextNames) set(sandbox, e2bID, sbxID, lang string) {
	c.lock()
	defer c.mu.Unlock()
	c.current[sandbox+"/"+e2bID], c.language[sandbox+"/"+e2bID] = sbxID, lang
}

func (c *contextNames) lookup(sandbox, e2bID string) (sbxID, lang string, ok bool) {
	c.lock()
	defer c.mu.Unlock()
	sbxID, ok = c.current[sandbox+"/"+e2bID]
	return sbxID, c.language[sandbox+"/"+e2bID], ok
}

func (c *contextNames) forget(sandbox, e2bID string) {
	c.lock()
	defer c.mu.Unlock()
	delete(c.current, sandbox+"/"+e2bID)
	delete(c.language, sandbox+"/"+e2bID)
	delete(c.runs, sandbox+"/"+e2bID)
}

func (c *contextNames) defaultOf(sandbox, lang string) string {
	c.lock()
	defer c.mu.Unlock()
	return c.defaults[sandbox+"/"+lang]
}

func (c *contextNames) setDefault(sandbox, lang, e2bID string) {
	c.lock()
	defer c.mu.Unlock()
	c.defaults[sandbox+"/"+lang] = e2bID
}

func (c *contextNames) countRun(sandbox, e2bID string) int {
	c.lock()
	defer c.mu.Unlock()
	c.runs[sandbox+"/"+e2bID]++
	return c.runs[sandbox+"/"+e2bID]
}

// contextJSON is E2B's Context.
type contextJSON struct {
	ID       string `json:"id"`
	Language string `json:"language"`
	Cwd      string `json:"cwd"`
}

// sbxLanguage maps E2B's language names onto sbx's.
func sbxLanguage(lang string) (string, error) {
	switch strings.ToLower(lang) {
	case "", "python", "python3":
		return "python", nil
	case "js", "javascript", "node", "ts", "typescript":
		return "javascript", nil
	case "bash", "sh":
		return "bash", nil
	}
	return "", errdefs.Invalid(sdk.CodeUnknownLanguage, "language %q is not supported: sbx runs python, javascript and bash", lang)
}

func (s *Server) serveInterpreter(w http.ResponseWriter, r *http.Request) {
	var err error
	id, restart := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/contexts/"), "/restart")
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/execute":
		err = s.execute(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/health":
		w.WriteHeader(http.StatusOK)
		w.Write([]byte("OK"))
	case r.Method == http.MethodPost && r.URL.Path == "/contexts":
		err = s.createContextHTTP(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/contexts":
		err = s.listContexts(w, r)
	case strings.HasPrefix(r.URL.Path, "/contexts/") && r.Method == http.MethodDelete && !restart:
		err = s.deleteContext(r.Context(), id)
		if err == nil {
			w.WriteHeader(http.StatusNoContent)
		}
	case strings.HasPrefix(r.URL.Path, "/contexts/") && r.Method == http.MethodPost && restart:
		err = s.restartContext(r.Context(), id)
		if err == nil {
			w.WriteHeader(http.StatusNoContent)
		}
	default:
		err = errdefs.NotFound(sdk.CodeRouteNotFound, "the code interpreter has no %s %s", r.Method, r.URL.Path)
	}
	if err != nil {
		writeEnvdErr(w, err)
	}
}

// createContext starts an sbx context and names it for E2B.
func (s *Server) createContext(ctx context.Context, lang, cwd string) (contextJSON, error) {
	sbxLang, err := sbxLanguage(lang)
	if err != nil {
		return contextJSON{}, err
	}
	if cwd == "" {
		cwd = homeOf(DefaultUser)
	}
	var c sdk.Context
	err = s.doJSON(ctx, agentCall{method: "POST", path: "/contexts", body: sdk.CreateContextRequest{Language: sbxLang, Cwd: cwd}}, &c)
	if errdefs.CodeOf(err) == sdk.CodeCwdNotFound && cwd == homeOf(DefaultUser) {
		err = s.doJSON(ctx, agentCall{method: "POST", path: "/contexts", body: sdk.CreateContextRequest{Language: sbxLang}}, &c)
	}
	if err != nil {
		return contextJSON{}, err
	}
	s.contexts.set(sandboxOf(ctx), c.ID, c.ID, sbxLang)
	return contextJSON{ID: c.ID, Language: sbxLang, Cwd: c.Cwd}, nil
}

func (s *Server) createContextHTTP(w http.ResponseWriter, r *http.Request) error {
	var body struct{ Language, Cwd string }
	if err := decodeBody(w, r, &body); err != nil {
		return err
	}
	c, err := s.createContext(r.Context(), body.Language, body.Cwd)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

func (s *Server) listContexts(w http.ResponseWriter, r *http.Request) error {
	var live []sdk.Context
	if err := s.doJSON(r.Context(), agentCall{method: "GET", path: "/contexts"}, &live); err != nil {
		return err
	}
	sb := sandboxOf(r.Context())
	s.contexts.lock()
	names := map[string]string{}
	for k, v := range s.contexts.current {
		if e2bID, ok := strings.CutPrefix(k, sb+"/"); ok {
			names[v] = e2bID
		}
	}
	s.contexts.mu.Unlock()
	out := []contextJSON{}
	for _, c := range live {
		id := c.ID
		if n, ok := names[c.ID]; ok {
			id = n
		}
		out = append(out, contextJSON{ID: id, Language: c.Language, Cwd: c.Cwd})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) deleteContext(ctx context.Context, e2bID string) error {
	sb := sandboxOf(ctx)
	sbxID, _, ok := s.contexts.lookup(sb, e2bID)
	if !ok {
		sbxID = e2bID
	}
	if err := s.doJSON(ctx, agentCall{method: "DELETE", path: "/contexts/" + url.PathEscape(sbxID)}, nil); err != nil {
		return err
	}
	s.contexts.forget(sb, e2bID)
	return nil
}

// restartContext replaces a context's interpreter; E2B's id stays.
func (s *Server) restartContext(ctx context.Context, e2bID string) error {
	sb := sandboxOf(ctx)
	sbxID, lang, ok := s.contexts.lookup(sb, e2bID)
	if !ok {
		var c sdk.Context
		if err := s.doJSON(ctx, agentCall{method: "GET", path: "/contexts/" + url.PathEscape(e2bID)}, &c); err != nil {
			return err
		}
		sbxID, lang = c.ID, c.Language
	}
	var old sdk.Context
	cwd := ""
	if s.doJSON(ctx, agentCall{method: "GET", path: "/contexts/" + url.PathEscape(sbxID)}, &old) == nil {
		cwd = old.Cwd
		s.doJSON(ctx, agentCall{method: "DELETE", path: "/contexts/" + url.PathEscape(sbxID)}, nil)
	}
	var c sdk.Context
	if err := s.doJSON(ctx, agentCall{method: "POST", path: "/contexts", body: sdk.CreateContextRequest{Language: lang, Cwd: cwd}}, &c); err != nil {
		return err
	}
	s.contexts.set(sb, e2bID, c.ID, lang)
	return nil
}

// execute runs code in the named context, or in the language's default
// context (made on first use, and again if its interpreter went away).
func (s *Server) execute(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Code      string            `json:"code"`
		ContextID string            `json:"context_id"`
		Language  string            `json:"language"`
		EnvVars   map[string]string `json:"env_vars"`
	}
	if err := decodeBody(w, r, &body); err != nil {
		return err
	}
	ctx, sb := r.Context(), sandboxOf(r.Context())
	e2bID := body.ContextID
	if e2bID == "" {
		lang, err := sbxLanguage(body.Language)
		if err != nil {
			return err
		}
		e2bID = s.contexts.defaultOf(sb, lang)
		if e2bID == "" {
			c, err := s.createContext(ctx, lang, "")
			if err != nil {
				return err
			}
			e2bID = c.ID
			s.contexts.setDefault(sb, lang, e2bID)
		}
	}
	sbxID, _, ok := s.contexts.lookup(sb, e2bID)
	if !ok {
		sbxID = e2bID
	}
	run := agentCall{method: "POST", path: "/contexts/" + url.PathEscape(sbxID) + "/run", query: url.Values{"stream": {"true"}},
		body: sdk.RunCodeRequest{Code: body.Code, Env: body.EnvVars}}
	resp, err := s.do(ctx, run)
	if errdefs.CodeOf(err) == sdk.CodeContextNotFound && body.ContextID == "" {
		// The default context's interpreter is gone (idle, instance restart): a fresh one.
		c, cerr := s.createContext(ctx, body.Language, "")
		if cerr != nil {
			return cerr
		}
		s.contexts.setDefault(sb, c.Language, c.ID)
		e2bID = c.ID
		run.path = "/contexts/" + url.PathEscape(c.ID) + "/run"
		resp, err = s.do(ctx, run)
	}
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out := agentapi.NewWriter(w)
	rd := agentapi.NewReader(resp.Body, agentapi.MaxRunLine)
	for {
		line, err := rd.Next()
		if err != nil {
			out.Send(map[string]any{"type": "error", "name": "SandboxError", "value": "the run's output stream broke: " + err.Error(), "traceback": ""})
			return nil
		}
		var ev sdk.RunEvent
		if json.Unmarshal(line, &ev) != nil {
			continue
		}
		for _, msg := range translateRunEvent(ev) {
			out.Send(msg)
		}
		if ev.Type == agentapi.EventEnd {
			out.Send(map[string]any{"type": "number_of_executions", "execution_count": s.contexts.countRun(sb, e2bID)})
			return nil
		}
		if ev.Type == agentapi.EventError && ev.Error != nil && ev.Error.Name == "" {
			return nil // the stream broke; nothing follows
		}
	}
}

// translateRunEvent maps one of sbx's run events onto the code
// interpreter's NDJSON messages.
func translateRunEvent(ev sdk.RunEvent) []map[string]any {
	switch ev.Type {
	case "stdout", "stderr":
		return []map[string]any{{"type": ev.Type, "text": string(ev.Data)}}
	case "result":
		if ev.Result == nil {
			return nil
		}
		return []map[string]any{resultJSON(*ev.Result)}
	case agentapi.EventError:
		if ev.Error == nil {
			return nil
		}
		if ev.Error.Name == "" {
			return []map[string]any{{"type": "error", "name": "SandboxError", "value": ev.Error.Message, "traceback": ""}}
		}
		return []map[string]any{{"type": "error", "name": ev.Error.Name, "value": ev.Error.Value, "traceback": ev.Error.Traceback}}
	case agentapi.EventEnd:
		if ev.TimedOut {
			return []map[string]any{{"type": "error", "name": "TimeoutError", "value": "the execution timed out and was interrupted", "traceback": ""}}
		}
	}
	return nil
}

// resultJSON is a result's MIME bundle as E2B names its formats.
func resultJSON(res sdk.CodeResult) map[string]any {
	m := map[string]any{"type": "result", "is_main_result": res.Main}
	set := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	set("text", res.Text)
	set("html", res.HTML)
	set("markdown", res.Markdown)
	set("svg", res.SVG)
	if len(res.PNG) > 0 {
		m["png"] = base64.StdEncoding.EncodeToString(res.PNG)
	}
	if len(res.JPEG) > 0 {
		m["jpeg"] = base64.StdEncoding.EncodeToString(res.JPEG)
	}
	if len(res.JSON) > 0 {
		var v any
		if json.Unmarshal(res.JSON, &v) == nil {
			m["json"] = v
		}
	}
	return m
}
