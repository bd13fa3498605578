package api

import (
	"slices"
	"strings"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/sdk"
)

// The error codes an operation can return, for the OpenAPI document: the
// codes every route of its kind can return (derived from the route table),
// plus those particular to it (routeCodes).
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

// routeCodes holds the codes particular to one operation, by
// "METHOD pattern"; a route missing here has the common codes only.
var routeCodes = map[string][]sdk.Code{
	"POST /v1/sandboxes":                            codesCreate,
	"PUT /v1/sandboxes/{id}":                        append([]sdk.Code{sdk.CodeNameMismatch}, codesCreate...),
	"GET /v1/sandboxes":                             {sdk.CodeInvalidLabel, sdk.CodeInvalidState},
	"DELETE /v1/sandboxes/{id}":                     {sdk.CodeSandboxHasForks, sdk.CodeSandboxBusy},
	"POST /v1/sandboxes/{id}/start":                 {sdk.CodeSandboxBusy, sdk.CodeSandboxPaused, sdk.CodeImageNotFound, sdk.CodeRuntimeUnavailable, sdk.CodeNetworkFull, sdk.CodeArchiveUnavailable},
	"POST /v1/sandboxes/{id}/stop":                  {sdk.CodeInvalidGrace, sdk.CodeSandboxBusy},
	"PATCH /v1/sandboxes/{id}":                      {sdk.CodeInvalidPolicy, sdk.CodeInvalidEnv, sdk.CodeSandboxPaused, sdk.CodeSandboxUnavailable, sdk.CodeInvalidCPU, sdk.CodeInvalidMemory, sdk.CodeInvalidPidsLimit, sdk.CodeInvalidLabel, sdk.CodeMemoryBelowUsage},
	"POST /v1/sandboxes/{id}/archive":               {sdk.CodeSandboxNotStopped, sdk.CodeArchiveUnavailable},
	"POST /v1/sandboxes/{id}/wait":                  {sdk.CodeInvalidState, sdk.CodeInvalidTimeout, sdk.CodeWaitTimeout},
	"POST /v1/sandboxes/{id}/exec":                  codesExec,
	"POST /v1/sandboxes/{id}/run":                   {sdk.CodeInvalidRun, sdk.CodeUnknownLanguage, sdk.CodeLanguageNotAvailable, sdk.CodeInterpreterFailed, sdk.CodeInvalidTimeout},
	"POST /v1/sandboxes/{id}/contexts":              {sdk.CodeUnknownLanguage, sdk.CodeLanguageNotAvailable, sdk.CodeLanguageStatelessOnly, sdk.CodeInterpreterFailed},
	"POST /v1/sandboxes/{id}/pause":                 {sdk.CodeSandboxNotStarted, sdk.CodePauseUnsupported, sdk.CodeCheckpointRefused},
	"POST /v1/sandboxes/{id}/resume":                {sdk.CodeSandboxNotPaused, sdk.CodeMemoryImageGone},
	"POST /v1/sandboxes/{id}/snapshots":             {sdk.CodeInvalidSnapshotName, sdk.CodeSnapshotExists, sdk.CodeMemoryUnsupported, sdk.CodeCheckpointRefused},
	"POST /v1/sandboxes/{id}/fork":                  {sdk.CodeInvalidCount, sdk.CodeMemoryUnsupported, sdk.CodeCheckpointRefused},
	"GET /v1/sandboxes/{id}/parent":                 {sdk.CodeNoParent, sdk.CodeParentGone},
	"PUT /v1/sandboxes/{id}/egress":                 {sdk.CodeInvalidEgress, sdk.CodeNoNetwork, sdk.CodeInvalidHTTPRule, sdk.CodeUnknownSecret},
	"GET /v1/sandboxes/{id}/egress/log":             {sdk.CodeNetworkUnavailable},
	"POST /v1/secrets":                              {sdk.CodeInvalidSecret, sdk.CodeNetworkUnavailable},
	"GET /v1/secrets":                               {sdk.CodeNetworkUnavailable},
	"PUT /v1/secrets/{name}/hosts":                  {sdk.CodeInvalidSecret, sdk.CodeSecretNotFound, sdk.CodeNetworkUnavailable},
	"DELETE /v1/secrets/{name}":                     {sdk.CodeSecretNotFound, sdk.CodeNetworkUnavailable},
	"POST /v1/sandboxes/{id}/ports":                 {sdk.CodeInvalidPort, sdk.CodeNoNetwork, sdk.CodeNetworkUnavailable},
	"DELETE /v1/sandboxes/{id}/ports/{port}":        {sdk.CodeInvalidPort, sdk.CodePortNotFound, sdk.CodeNetworkUnavailable},
	"POST /v1/sandboxes/{id}/signed-urls":           {sdk.CodeInvalidPort, sdk.CodePortNotFound, sdk.CodeInvalidExpiry, sdk.CodeNetworkUnavailable},
	"GET /v1/sandboxes/{id}/ports":                  {sdk.CodeNetworkUnavailable},
	"GET /v1/snapshots/{name}":                      {sdk.CodeSnapshotNotFound},
	"DELETE /v1/snapshots/{name}":                   {sdk.CodeSnapshotNotFound},
	"POST /v1/images/import":                        {sdk.CodeInvalidImageName, sdk.CodeInvalidImage, sdk.CodeNameTaken},
	"POST /v1/images/pull":                          {sdk.CodeInvalidImageRef, sdk.CodeImageNotFound, sdk.CodeRegistryUnavailable},
	"POST /v1/images/build":                         append([]sdk.Code{sdk.CodeBodyTooLarge, sdk.CodeTarInvalid}, codesBuild...), // build.go
	"POST /v1/images/build/steps":                   codesBuild,
	"POST /v1/sandboxes/{id}/ssh-access":            {sdk.CodeSSHDisabled, sdk.CodeInvalidExpiry, sdk.CodeInvalidKey},
	"DELETE /v1/sandboxes/{id}/ssh-access/{access}": {sdk.CodeSSHDisabled, sdk.CodeSSHAccessNotFound},
	"POST /v1/volumes":                              {sdk.CodeInvalidVolume, sdk.CodeVolumeExists, sdk.CodeNoSpace},
	"GET /v1/volumes":                               {sdk.CodeInvalidVolume},
	"GET /v1/volumes/{name}":                        {sdk.CodeInvalidVolume, sdk.CodeVolumeNotFound},
	"DELETE /v1/volumes/{name}":                     {sdk.CodeInvalidVolume, sdk.CodeVolumeNotFound, sdk.CodeVolumeInUse},
	"POST /v1/pools":                                append([]sdk.Code{sdk.CodeInvalidPool, sdk.CodePoolExists}, codesCreate...),
	"GET /v1/pools":                                 {sdk.CodeInvalidPool},
	"GET /v1/pools/{name}":                          {sdk.CodeInvalidPool, sdk.CodePoolNotFound},
	"PATCH /v1/pools/{name}":                        {sdk.CodeInvalidPool, sdk.CodePoolNotFound},
	"DELETE /v1/pools/{name}":                       {sdk.CodeInvalidPool, sdk.CodePoolNotFound},
	"POST /v1/sandboxes/{id}/buckets":               {sdk.CodeLiveMountUnsupported, sdk.CodeInvalidBucketMount, sdk.CodeInvalidVolume, sdk.CodeBucketMountExists, sdk.CodeSandboxNotStarted},
	"DELETE /v1/sandboxes/{id}/buckets":             {sdk.CodeLiveMountUnsupported, sdk.CodeInvalidBucketMount, sdk.CodeBucketMountNotFound},
	"POST /v1/sandboxes/{id}/backups":               {sdk.CodeArchiveUnavailable, sdk.CodeInvalidBackup, sdk.CodeInvalidPath, sdk.CodePathNotFound, sdk.CodeBlobStoreUnavailable},
	"GET /v1/backups":                               {sdk.CodeArchiveUnavailable},
	"GET /v1/backups/{backup}":                      {sdk.CodeArchiveUnavailable, sdk.CodeBackupNotFound},
	"DELETE /v1/backups/{backup}":                   {sdk.CodeArchiveUnavailable, sdk.CodeBackupNotFound},
	"POST /v1/backups/{backup}/restore":             {sdk.CodeArchiveUnavailable, sdk.CodeBackupNotFound, sdk.CodeBackupCorrupt, sdk.CodeBackupTargetNotEmpty, sdk.CodeSandboxNotFound, sdk.CodeInvalidPath, sdk.CodeBlobStoreUnavailable},
	"POST /v1/sandboxes/{id}/desktop/view":          {sdk.CodeInvalidExpiry, sdk.CodeNoNetwork, sdk.CodeNetworkUnavailable, sdk.CodePreviewDomainRequired},
	"GET /v1/images/{name...}":                      {sdk.CodeImageNotFound},
	"DELETE /v1/images/{name...}":                   {sdk.CodeImageNotFound, sdk.CodeImageInUse},

	// for an account, and by the caller's name (the E2B layer's files and default contexts)
	"PUT /v1/sandboxes/{id}/contexts/{cid}":          {sdk.CodeInvalidID, sdk.CodeContextExists, sdk.CodeUnknownLanguage, sdk.CodeLanguageNotAvailable, sdk.CodeLanguageStatelessOnly, sdk.CodeInterpreterFailed},
	"POST /v1/sandboxes/{id}/contexts/{cid}/restart": {sdk.CodeInterpreterFailed},
	"PUT /v1/sandboxes/{id}/files/owned":             {sdk.CodeUnknownUser},
	"POST /v1/sandboxes/{id}/files/mkdir/owned":      {sdk.CodeUnknownUser},
	"POST /v1/sandboxes/{id}/ptys/{pty}/input":       {sdk.CodePTYExited, sdk.CodeBodyTooLarge},
}

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
	add(routeCodes[rt.method+" "+rt.pattern]...)
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
	case strings.HasPrefix(agentPath, "/desktop/"):
		return desktopCodes(agentPath) // desktop.go
	}
	return nil
}
