package api

import (
	"slices"
	"strings"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/sdk"
)

// The error codes an operation can return, for the OpenAPI document: the
// codes every route of its kind can return (derived from the route table),
// plus those particular to it (its route's codes).
var (
	codesAlways  = []sdk.Code{sdk.CodeInternal}
	codesAuth    = []sdk.Code{sdk.CodeUnauthorized}
	codesBody    = []sdk.Code{sdk.CodeInvalidJSON, sdk.CodeUnknownField, sdk.CodeBodyTooLarge}
	codesQuery   = []sdk.Code{sdk.CodeInvalidParameter}
	codesSandbox = []sdk.Code{sdk.CodeSandboxNotFound}
	// A toolbox call starts a stopped sandbox, then reaches its agent.
	codesToolbox = []sdk.Code{sdk.CodeSandboxUnavailable, sdk.CodeAgentUnavailable, sdk.CodeAgentSocketInvalid,
		sdk.CodeAgentResponseTooLarge, sdk.CodeSandboxBusy, sdk.CodeSandboxPaused, sdk.CodeDaemonStopping}
	// A relayed stream can end in an error event.
	codesStream = []sdk.Code{sdk.CodeInstanceLost, sdk.CodeStreamLineTooLong}
	codesFiles  = []sdk.Code{sdk.CodeInvalidPath, sdk.CodePathNotFound, sdk.CodeFileNotFound, sdk.CodePermissionDenied,
		sdk.CodeNotADirectory, sdk.CodeIsADirectory, sdk.CodeNoSpace, sdk.CodeReadOnlyFilesystem}
	codesProcess = []sdk.Code{sdk.CodeProcessNotFound, sdk.CodeProcessExited, sdk.CodeStaleHandle}
	codesSession = []sdk.Code{sdk.CodeSessionNotFound, sdk.CodeSessionEnded, sdk.CodeStaleHandle}
	codesPTY     = []sdk.Code{sdk.CodePTYNotFound, sdk.CodeStaleHandle}
	codesContext = []sdk.Code{sdk.CodeContextNotFound, sdk.CodeStaleHandle}
	codesExec    = []sdk.Code{sdk.CodeInvalidExec, sdk.CodeInvalidCommand, sdk.CodeInvalidEnv, sdk.CodeInvalidTimeout,
		sdk.CodeCommandNotFound, sdk.CodeCommandNotExecutable, sdk.CodeCwdNotFound, sdk.CodeProcessLimit, sdk.CodeShuttingDown}
	codesCreate = []sdk.Code{sdk.CodePoolNotFound, sdk.CodeInvalidPool, sdk.CodeInvalidName, sdk.CodeNameTaken, sdk.CodeInvalidImage, sdk.CodeImageNotFound, sdk.CodeInvalidCPU,
		sdk.CodeInvalidMemory, sdk.CodeInvalidDisk, sdk.CodeInvalidPidsLimit, sdk.CodeInvalidEnv, sdk.CodeInvalidWorkdir, sdk.CodeInvalidClass,
		sdk.CodeClassUnavailable, sdk.CodeInvalidNetwork, sdk.CodeInvalidEgress, sdk.CodeInvalidHTTPRule, sdk.CodeUnknownSecret, sdk.CodeInvalidPolicy, sdk.CodeInvalidEntrypoint,
		sdk.CodeInvalidRestartPolicy, sdk.CodeSnapshotNotFound, sdk.CodeImageAndSnapshot, sdk.CodeNetworkFull, sdk.CodeRuntimeUnavailable}
)

// codesPreview are the codes of the preview routes (every method).
var codesPreview = []sdk.Code{sdk.CodeInvalidPort, sdk.CodeNetworkUnavailable, sdk.CodePreviewNotFound, sdk.CodePreviewUnauthorized}

// codesOf lists, sorted, the error codes rt can return.
func codesOf(rt route) []sdk.Code {
	codes := slices.Clone(codesAlways)
	add := func(cs ...sdk.Code) { codes = append(codes, cs...) }
	if !rt.public {
		add(codesAuth...)
	}
	if rt.body != nil {
		if _, raw := rt.body.(rawBody); !raw {
			add(codesBody...)
		}
	}
	for _, q := range rt.query {
		if q.typ == "integer" || q.typ == "number" || q.typ == "boolean" {
			add(codesQuery...)
		}
	}
	if rest, ok := strings.CutPrefix(rt.pattern, "/v1/sandboxes/{id}"); ok {
		add(codesSandbox...)
		if rt.onlyRunning { // lookup.go
			add(sdk.CodeSandboxNotRunning, sdk.CodeSandboxPaused)
		}
		if _, toolbox := agentapi.Lookup(rt.method, rest); toolbox {
			add(codesToolbox...)
			add(toolboxCodes(rest)...)
			if rt.lookup { // lookup.go
				add(sdk.CodeNotInCurrentInstance)
			}
			if _, nd := rt.response.(ndjson); nd || slices.ContainsFunc(rt.query, func(p param) bool { return p.name == "stream" }) {
				add(codesStream...)
			}
		}
	}
	add(rt.codes...)
	add(tenancyCodes(rt)...) // auth.go
	if strings.HasSuffix(rt.pattern, "/ports/{port}/{path...}") {
		add(codesPreview...)
	}
	slices.Sort(codes)
	return slices.Compact(codes)
}

// toolboxCodes are the codes of a family of agent routes.
func toolboxCodes(agentPath string) []sdk.Code {
	switch {
	case strings.HasPrefix(agentPath, "/files"), agentPath == "/watch":
		return codesFiles
	case strings.HasPrefix(agentPath, "/processes/"):
		return codesProcess
	case strings.HasPrefix(agentPath, "/processes"):
		return codesExec
	case strings.HasPrefix(agentPath, "/sessions/"):
		return codesSession
	case strings.HasPrefix(agentPath, "/ptys/"):
		return codesPTY
	case strings.HasPrefix(agentPath, "/contexts/"):
		return codesContext
	case strings.HasPrefix(agentPath, "/git/"):
		return codesGit // git.go
	case strings.HasPrefix(agentPath, "/desktop/recordings"):
		return recordingCodes(agentPath) // recordings.go
	case strings.HasPrefix(agentPath, "/desktop/"):
		return desktopCodes(agentPath) // desktop.go
	case strings.HasPrefix(agentPath, "/lsp/"):
		return lspCodes(agentPath) // lsp.go
	}
	return nil
}
