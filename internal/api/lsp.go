package api

import "github.com/sbxhq/sbx/wire"

// The language-server routes are the agent's (internal/agent/lsp), proxied
// like every toolbox route.

// lspCodes are the codes of the agent's /lsp routes.
func lspCodes(agentPath string) []wire.Code {
	codes := []wire.Code{wire.CodeUnknownLanguage, wire.CodeInvalidPath, wire.CodeLSPNotStarted, wire.CodeLSPFailed}
	switch agentPath {
	case "/lsp/start":
		return append(codes, wire.CodeLanguageNotAvailable, wire.CodePathNotFound, wire.CodeLSPLimit, wire.CodeShuttingDown, wire.CodeCommandNotFound)
	case "/lsp/did-open":
		return append(codes, wire.CodeFileNotFound, wire.CodeNotARegularFile, wire.CodeBodyTooLarge, wire.CodeLSPLimit)
	case "/lsp/completions":
		return append(codes, wire.CodeInvalidParameter)
	}
	return codes
}
