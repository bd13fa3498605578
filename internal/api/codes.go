package api

import (
	"slices"
	"strings"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/wire"
)

// The error codes an operation can return, for the OpenAPI document: the
// codes every route of its kind can return (derived from the route table),
// plus those particular to it (its route's codes).
var (
	codesAlways  = []wire.Code{wire.CodeInternal}
	codesAuth    = []wire.Code{wire.CodeUnauthorized}
	codesBody    = []wire.Code{wire.CodeInvalidJSON, wire.CodeUnknownField, wire.CodeBodyTooLarge}
	codesQuery   = []wire.Code{wire.CodeInvalidParameter}
	codesSandbox = []wire.Code{wire.CodeSandboxNotFound}
	// A toolbox call starts a stopped sandbox, then reaches its agent.
	codesToolbox = []wire.Code{wire.CodeSandboxUnavailable, wire.CodeAgentUnavailable, wire.CodeAgentSocketInvalid,
		wire.CodeAgentResponseTooLarge, wire.CodeSandboxBusy, wire.CodeSandboxPaused, wire.CodeDaemonStopping}
	// A relayed stream can end in an error event.
	codesStream = []wire.Code{wire.CodeInstanceLost, wire.CodeStreamLineTooLong}
	codesFiles  = []wire.Code{wire.CodeInvalidPath, wire.CodePathNotFound, wire.CodeFileNotFound, wire.CodePermissionDenied,
		wire.CodeNotADirectory, wire.CodeIsADirectory, wire.CodeNoSpace, wire.CodeReadOnlyFilesystem}
	codesProcess = []wire.Code{wire.CodeProcessNotFound, wire.CodeProcessExited, wire.CodeStaleHandle}
	codesSession = []wire.Code{wire.CodeSessionNotFound, wire.CodeSessionEnded, wire.CodeStaleHandle}
	codesPTY     = []wire.Code{wire.CodePTYNotFound, wire.CodeStaleHandle}
	codesContext = []wire.Code{wire.CodeContextNotFound, wire.CodeStaleHandle}
	codesExec    = []wire.Code{wire.CodeInvalidExec, wire.CodeInvalidCommand, wire.CodeInvalidEnv, wire.CodeInvalidTimeout,
		wire.CodeCommandNotFound, wire.CodeCommandNotExecutable, wire.CodeCwdNotFound, wire.CodeProcessLimit, wire.CodeShuttingDown}
	codesCreate = []wire.Code{wire.CodePoolNotFound, wire.CodeInvalidPool, wire.CodeInvalidName, wire.CodeNameTaken, wire.CodeInvalidImage, wire.CodeImageNotFound, wire.CodeInvalidCPU,
		wire.CodeInvalidMemory, wire.CodeInvalidDisk, wire.CodeInvalidPidsLimit, wire.CodeInvalidEnv, wire.CodeInvalidWorkdir, wire.CodeInvalidClass,
		wire.CodeClassUnavailable, wire.CodeInvalidNetwork, wire.CodeInvalidEgress, wire.CodeInvalidHTTPRule, wire.CodeUnknownSecret, wire.CodeInvalidPolicy, wire.CodeInvalidEntrypoint,
		wire.CodeInvalidRestartPolicy, wire.CodeSnapshotNotFound, wire.CodeImageAndSnapshot, wire.CodeNetworkFull, wire.CodeRuntimeUnavailable}
)

// codesPreview are the codes of the preview routes (every method).
var codesPreview = []wire.Code{wire.CodeInvalidPort, wire.CodeNetworkUnavailable, wire.CodePreviewNotFound, wire.CodePreviewUnauthorized}

// codesOf lists, sorted, the error codes rt can return.
func codesOf(rt route) []wire.Code {
	codes := slices.Clone(codesAlways)
	add := func(cs ...wire.Code) { codes = append(codes, cs...) }
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
			add(wire.CodeSandboxNotRunning, wire.CodeSandboxPaused)
		}
		if _, toolbox := agentapi.Lookup(rt.method, rest); toolbox {
			add(codesToolbox...)
			add(toolboxCodes(rest)...)
			if rt.lookup { // lookup.go
				add(wire.CodeNotInCurrentInstance)
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
func toolboxCodes(agentPath string) []wire.Code {
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
