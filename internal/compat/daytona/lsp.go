package daytona

import (
	"net/http"
	"strings"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/wire"
)

// LSP: Daytona's /lsp toolbox routes onto the agent's language servers
// (internal/agent/lsp). Daytona names a document by "file://" + the path the
// SDK was given, relative or absolute; the agent resolves a relative one
// from the workdir, as Daytona does.

// lspServerBody is the body of start and stop (the SDK's LspServerRequest).
type lspServerBody struct {
	LanguageID    string `json:"languageId"`
	PathToProject string `json:"pathToProject"`
}

// lspDocumentBody is the body of did-open and did-close (LspDocumentRequest).
type lspDocumentBody struct {
	LanguageID    string `json:"languageId"`
	PathToProject string `json:"pathToProject"`
	URI           string `json:"uri"`
}

// lspPath is the path of a Daytona document URI.
func lspPath(uri string) (string, error) {
	p, ok := strings.CutPrefix(uri, "file://")
	if !ok || p == "" {
		return "", invalid(wire.CodeInvalidPath, "uri %q is not a file:// URI", uri)
	}
	return p, nil
}

// lspServer serves start and stop.
func (h *Handler) lspServer(route agentapi.Route) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var in lspServerBody
		if err := decodeStrict(w, r, &in); err != nil {
			return err
		}
		if _, err := agentCall[none](h, r, route, wire.LSPServerRequest{Language: in.LanguageID, Project: in.PathToProject}); err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]string{})
		return nil
	}
}

// lspDocument serves did-open and did-close.
func (h *Handler) lspDocument(route agentapi.Route) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var in lspDocumentBody
		if err := decodeStrict(w, r, &in); err != nil {
			return err
		}
		p, err := lspPath(in.URI)
		if err != nil {
			return err
		}
		if _, err := agentCall[none](h, r, route, wire.LSPDocumentRequest{Language: in.LanguageID, Project: in.PathToProject, Path: p}); err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]string{})
		return nil
	}
}

// daytonaSymbols is symbols in the SDK's LspSymbol shape.
func daytonaSymbols(syms []wire.LSPSymbol) []map[string]any {
	out := make([]map[string]any, 0, len(syms))
	for _, s := range syms {
		out = append(out, map[string]any{"name": s.Name, "kind": s.Kind, "location": map[string]any{"uri": s.URI, "range": s.Range}})
	}
	return out
}

func (h *Handler) lspDocumentSymbols(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	p, err := lspPath(q.Get("uri"))
	if err != nil {
		return err
	}
	syms, err := agentCall[[]wire.LSPSymbol](h, r, agentapi.LSPDocumentSymbols, wire.LSPDocumentRequest{Language: q.Get("languageId"), Project: q.Get("pathToProject"), Path: p})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, daytonaSymbols(syms))
	return nil
}

func (h *Handler) lspWorkspaceSymbols(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	syms, err := agentCall[[]wire.LSPSymbol](h, r, agentapi.LSPWorkspaceSymbols, wire.LSPWorkspaceSymbolsRequest{Language: q.Get("languageId"), Project: q.Get("pathToProject"), Query: q.Get("query")})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, daytonaSymbols(syms))
	return nil
}

func (h *Handler) lspCompletions(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		LanguageID    string           `json:"languageId"`
		PathToProject string           `json:"pathToProject"`
		URI           string           `json:"uri"`
		Position      wire.LSPPosition `json:"position"`
		Context       *struct {
			TriggerKind      int    `json:"triggerKind"`
			TriggerCharacter string `json:"triggerCharacter"`
		} `json:"context"`
	}
	if err := decodeStrict(w, r, &in); err != nil {
		return err
	}
	p, err := lspPath(in.URI)
	if err != nil {
		return err
	}
	req := wire.LSPCompletionRequest{Language: in.LanguageID, Project: in.PathToProject, Path: p, Position: in.Position}
	if in.Context != nil {
		req.TriggerCharacter = in.Context.TriggerCharacter
	}
	list, err := agentCall[wire.LSPCompletionList](h, r, agentapi.LSPCompletions, req)
	if err != nil {
		return err
	}
	items := make([]map[string]any, 0, len(list.Items))
	for _, it := range list.Items {
		item := map[string]any{"label": it.Label}
		for k, v := range map[string]string{"detail": it.Detail, "insertText": it.InsertText, "sortText": it.SortText, "filterText": it.FilterText} {
			if v != "" {
				item[k] = v
			}
		}
		if it.Kind != 0 {
			item["kind"] = it.Kind
		}
		if it.Documentation != "" {
			item["documentation"] = map[string]string{"kind": "markdown", "value": it.Documentation}
		}
		items = append(items, item)
	}
	writeJSON(w, http.StatusOK, map[string]any{"isIncomplete": list.Incomplete, "items": items})
	return nil
}
