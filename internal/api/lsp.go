package api

import "github.com/sbxhq/sbx/sdk"

// The language-server routes are the agent's (internal/agent/lsp), proxied
// like every toolbox route.

// lspCodes are the codes of the agent's /lsp routes.
func lspCodes(agentPath string) []sdk.Code {
	codes := []sdk.Code{sdk.CodeUnknownLanguage, sdk.CodeInvalidPath, sdk.CodeLSPNotStarted, sdk.CodeLSPFailed}
	switch agentPath {
	case "/lsp/start":
		return append(codes, sdk.CodeLanguageNotAvailable, sdk.CodePathNotFound, sdk.CodeLSPLimit, sdk.CodeShuttingDown, sdk.CodeCommandNotFound)
	case "/lsp/did-open":
		return append(codes, sdk.CodeFileNotFound, sdk.CodeNotARegularFile, sdk.CodeBodyTooLarge, sdk.CodeLSPLimit)
	case "/lsp/completions":
		return append(codes, sdk.CodeInvalidParameter)
	}
	return codes
}
