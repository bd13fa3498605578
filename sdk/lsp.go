package sdk

import (
	"context"
	"net/http"
)

// Language servers: the sandbox's agent runs a language server (pylsp for
// python, typescript-language-server for typescript and javascript) for a
// project directory, speaks LSP to it over its stdin and stdout, and
// answers symbols and completions. The server must be in the image (sbx's
// python image has pylsp); without it start is 400 LANGUAGE_NOT_AVAILABLE
// naming the program. Routes: …/lsp/start, …/lsp/stop, …/lsp/did-open,
// …/lsp/did-close, …/lsp/document-symbols, …/lsp/workspace-symbols,
// …/lsp/completions.

// lspDo posts in to …/lsp/op and decodes the answer into a *T (nil T: none).
func lspDo[T any](c *Client, ctx context.Context, idOrName, op string, in any) (*T, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	var out T
	if err := c.call(ctx, request{method: http.MethodPost, path: sandboxPath(idOrName, "/lsp/"+op), in: in}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// StartLSP starts the language server of a language for a project (or
// returns the one that runs).
func (c *Client) StartLSP(ctx context.Context, idOrName string, req LSPServerRequest) (*LSPServer, error) {
	return lspDo[LSPServer](c, ctx, idOrName, "start", req)
}

// StopLSP stops a project's language server.
func (c *Client) StopLSP(ctx context.Context, idOrName string, req LSPServerRequest) error {
	_, err := lspDo[struct{}](c, ctx, idOrName, "stop", req)
	return err
}

// LSPDidOpen opens a file of the project on its language server.
func (c *Client) LSPDidOpen(ctx context.Context, idOrName string, req LSPDocumentRequest) error {
	_, err := lspDo[struct{}](c, ctx, idOrName, "did-open", req)
	return err
}

// LSPDidClose closes a file on the project's language server.
func (c *Client) LSPDidClose(ctx context.Context, idOrName string, req LSPDocumentRequest) error {
	_, err := lspDo[struct{}](c, ctx, idOrName, "did-close", req)
	return err
}

// LSPDocumentSymbols returns the symbols of a file of the project.
func (c *Client) LSPDocumentSymbols(ctx context.Context, idOrName string, req LSPDocumentRequest) ([]LSPSymbol, error) {
	out, err := lspDo[[]LSPSymbol](c, ctx, idOrName, "document-symbols", req)
	if err != nil {
		return nil, err
	}
	return *out, nil
}

// LSPWorkspaceSymbols returns the project's symbols whose name contains the query.
func (c *Client) LSPWorkspaceSymbols(ctx context.Context, idOrName string, req LSPWorkspaceSymbolsRequest) ([]LSPSymbol, error) {
	out, err := lspDo[[]LSPSymbol](c, ctx, idOrName, "workspace-symbols", req)
	if err != nil {
		return nil, err
	}
	return *out, nil
}

// LSPCompletions returns the completions at a position of a file of the project.
func (c *Client) LSPCompletions(ctx context.Context, idOrName string, req LSPCompletionRequest) (*LSPCompletionList, error) {
	return lspDo[LSPCompletionList](c, ctx, idOrName, "completions", req)
}
