package e2b

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// The code interpreter (E2B's port 49999) over sbx's code contexts:
// POST /execute streams NDJSON (stdout, stderr, result, error,
// number_of_executions); /contexts creates, lists, deletes and restarts.
// Everything lives in the agent: an E2B context id is the agent's context
// id (a restart keeps it), each language's default context is the agent's
// context named defaultContextPrefix+language, and the execution count is
// the context's own run count. Nothing outlives the sandbox's instance.

// defaultContextPrefix names the default context of a language.
const defaultContextPrefix = "e2b-default-"

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
	return "", errdefs.Invalid(wire.CodeUnknownLanguage, "language %q is not supported: sbx runs python, javascript and bash", lang)
}

func (s *Server) serveInterpreter(w http.ResponseWriter, r *http.Request) {
	var err error
	b := s.box(r.Header)
	id, restart := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/contexts/"), "/restart")
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/execute":
		err = b.execute(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/health":
		if err := b.health(r.Context()); err != nil {
			writeHealthErr(w, err)
			return
		}
		w.WriteHeader(http.StatusOK)
		w.Write([]byte("OK"))
	case r.Method == http.MethodPost && r.URL.Path == "/contexts":
		err = b.createContextHTTP(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/contexts":
		err = b.listContexts(w, r)
	case strings.HasPrefix(r.URL.Path, "/contexts/") && r.Method == http.MethodDelete && !restart:
		err = b.deleteContext(r.Context(), id)
		if err == nil {
			w.WriteHeader(http.StatusNoContent)
		}
	case strings.HasPrefix(r.URL.Path, "/contexts/") && r.Method == http.MethodPost && restart:
		err = b.restartContext(r.Context(), id)
		if err == nil {
			w.WriteHeader(http.StatusNoContent)
		}
	default:
		err = errdefs.NotFound(wire.CodeRouteNotFound, "the code interpreter has no %s %s", r.Method, r.URL.Path)
	}
	if err != nil {
		writeEnvdErr(w, err)
	}
}

// createContext starts an sbx context; with a name, the context of that
// name (started if it is not running).
func (b box) createContext(ctx context.Context, name, lang, cwd string) (contextJSON, error) {
	sbxLang, err := sbxLanguage(lang)
	if err != nil {
		return contextJSON{}, err
	}
	if cwd == "" {
		cwd = homeOf(DefaultUser)
	}
	route, p := agentapi.CreateContext, agentapi.Params{}
	if name != "" {
		route, p = agentapi.EnsureContext, at(name)
	}
	c, err := callAgent[wire.Context](ctx, b, route, p, wire.CreateContextRequest{Language: sbxLang, Cwd: cwd})
	if errdefs.CodeOf(err) == wire.CodeCwdNotFound && cwd == homeOf(DefaultUser) {
		c, err = callAgent[wire.Context](ctx, b, route, p, wire.CreateContextRequest{Language: sbxLang})
	}
	if err != nil {
		return contextJSON{}, err
	}
	return contextJSON{ID: c.ID, Language: sbxLang, Cwd: c.Cwd}, nil
}

func (b box) createContextHTTP(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Language string `json:"language"`
		Cwd      string `json:"cwd"`
	}
	if err := decodeJSON(w, r, &body, true); err != nil {
		return err
	}
	c, err := b.createContext(r.Context(), "", body.Language, body.Cwd)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

func (b box) listContexts(w http.ResponseWriter, r *http.Request) error {
	live, err := callAgent[[]wire.Context](r.Context(), b, agentapi.ListContexts, agentapi.Params{}, nil)
	if err != nil {
		return err
	}
	out := []contextJSON{}
	for _, c := range live {
		out = append(out, contextJSON{ID: c.ID, Language: c.Language, Cwd: c.Cwd})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (b box) deleteContext(ctx context.Context, id string) error {
	_, err := callAgent[agentapi.None](ctx, b, agentapi.DeleteContext, at(id), nil)
	return err
}

// restartContext replaces a context's interpreter; its id stays.
func (b box) restartContext(ctx context.Context, id string) error {
	_, err := callAgent[wire.Context](ctx, b, agentapi.RestartContext, at(id), nil)
	return err
}

// execute runs code in the named context, or in the language's default
// context (started on first use, and again if its interpreter went away).
func (b box) execute(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Code      string            `json:"code"`
		ContextID string            `json:"context_id"`
		Language  string            `json:"language"`
		EnvVars   map[string]string `json:"env_vars"`
	}
	if err := decodeJSON(w, r, &body, true); err != nil {
		return err
	}
	ctx := r.Context()
	id := body.ContextID
	ensureDefault := func() error {
		lang, err := sbxLanguage(body.Language)
		if err != nil {
			return err
		}
		c, err := b.createContext(ctx, defaultContextPrefix+lang, lang, "")
		id = c.ID
		return err
	}
	if id == "" {
		if err := ensureDefault(); err != nil {
			return err
		}
	}
	run := wire.RunCodeRequest{Code: body.Code, Env: body.EnvVars}
	p := agentapi.Params{Path: []string{id}, Query: url.Values{"stream": {"true"}}}
	resp, err := b.open(ctx, agentapi.RunContext, p, jsonBody(run), "application/json")
	if errdefs.CodeOf(err) == wire.CodeContextNotFound && body.ContextID == "" {
		// The default context's interpreter went away (idle, exited) between the two calls.
		if err := ensureDefault(); err != nil {
			return err
		}
		resp, err = b.open(ctx, agentapi.RunContext, p, jsonBody(run), "application/json")
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
		var ev wire.RunEvent
		if json.Unmarshal(line, &ev) != nil {
			continue
		}
		for _, msg := range translateRunEvent(ev) {
			out.Send(msg)
		}
		if ev.Type == agentapi.EventEnd {
			// The context's own run count; if it is gone, no count is sent.
			if c, err := callAgent[wire.Context](ctx, b, agentapi.GetContext, at(id), nil); err == nil {
				out.Send(map[string]any{"type": "number_of_executions", "execution_count": c.Runs})
			}
			return nil
		}
		if ev.Type == agentapi.EventError && ev.Error != nil && ev.Error.Name == "" {
			return nil // the stream broke; nothing follows
		}
	}
}

// jsonBody is v as a JSON request body.
func jsonBody(v any) io.Reader {
	raw, _ := json.Marshal(v)
	return bytes.NewReader(raw)
}

// translateRunEvent maps one of sbx's run events onto the code
// interpreter's NDJSON messages.
func translateRunEvent(ev wire.RunEvent) []map[string]any {
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
func resultJSON(res wire.CodeResult) map[string]any {
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
