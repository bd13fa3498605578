package daytona

import (
	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/authz"
)

// routes is every Daytona operation the layer serves. Paths are the SDK's
// (its generated clients @daytona/api-client and @daytona/toolbox-api-client)
// under apiPrefix and toolboxPrefix/{id}.
func (h *Handler) routes() []route {
	// Each operation's decision (internal/authz): what scope it needs and
	// whether it is audited.
	api := func(method, path string, need authz.Op, fn handlerFunc) route {
		return route{pattern: method + " " + apiPrefix + path, fn: fn, need: need}
	}
	tb := func(method, path string, need authz.Op, fn handlerFunc) route {
		return route{pattern: method + " " + toolboxPrefix + "/{id}" + path, fn: fn, need: need}
	}
	read, write, exec, execRead := authz.Read, authz.Write, authz.Exec, authz.ExecRead
	return []route{
		// Control plane (control.go, preview.go, snapshots.go, build.go, volumes.go, settings.go, warmpools.go).
		api("POST", "/sandbox", write, h.createSandbox),
		api("GET", "/sandbox", read, h.listSandboxes),
		api("GET", "/sandbox/{id}", read, h.getSandbox),
		api("DELETE", "/sandbox/{id}", write, h.deleteSandbox),
		api("POST", "/sandbox/{id}/start", write, h.startSandbox),
		api("POST", "/sandbox/{id}/stop", write, h.stopSandbox),
		api("POST", "/sandbox/{id}/archive", write, h.archiveSandbox),
		api("POST", "/sandbox/{id}/pause", write, h.pauseSandbox),
		api("POST", "/sandbox/{id}/fork", write, h.forkSandbox),
		api("PUT", "/sandbox/{id}/labels", write, h.replaceLabels),
		api("POST", "/sandbox/{id}/autostop/{interval}", write, h.setInterval("autostop")),
		api("POST", "/sandbox/{id}/autopause/{interval}", write, h.setInterval("autopause")),
		api("POST", "/sandbox/{id}/autoarchive/{interval}", write, h.setInterval("autoarchive")),
		api("POST", "/sandbox/{id}/autodelete/{interval}", write, h.setInterval("autodelete")),
		api("POST", "/sandbox/{id}/ttl/{interval}", write, h.setInterval("ttl")),
		api("GET", "/sandbox/{id}/toolbox-proxy-url", read, h.toolboxProxyURL),
		api("POST", "/sandbox/{id}/last-activity", write, h.refreshActivity),
		api("POST", "/sandbox/{id}/snapshot", write, h.createSnapshot),
		api("POST", "/sandbox/{id}/resize", write, h.resizeSandbox),
		api("GET", "/sandbox/{id}/ports/{port}/preview-url", exec, h.previewLink),
		api("GET", "/sandbox/{id}/ports/{port}/signed-preview-url", exec, h.signedPreviewLink),
		api("POST", "/sandbox/{id}/network-settings", write, h.updateNetworkSettings),
		api("POST", "/sandbox/{id}/ssh-access", write, h.createSSHAccess),
		api("DELETE", "/sandbox/{id}/ssh-access", write, h.revokeSSHAccess),
		api("GET", "/sandbox/ssh-access/validate", read, h.validateSSHAccess),
		api("GET", "/snapshots", read, h.listSnapshots),
		api("GET", "/snapshots/{name}", read, h.getSnapshot),
		api("POST", "/snapshots", write, h.createSnapshotFromImage),
		api("DELETE", "/snapshots/{name}", write, h.deleteSnapshot),
		api("POST", "/snapshots/{name}/activate", write, h.activateSnapshot),
		api("GET", "/volumes", read, h.listVolumes),
		api("GET", "/volumes/{name}", read, h.getVolume),
		api("GET", "/volumes/by-name/{name}", read, h.getVolume),
		api("POST", "/volumes", write, h.createVolume),
		api("DELETE", "/volumes/{name}", write, h.deleteVolume),
		api("GET", "/warm-pools", read, h.listWarmPools),
		api("POST", "/warm-pools", write, h.createWarmPool),
		api("PATCH", "/warm-pools/{wid}", write, h.updateWarmPool),
		api("DELETE", "/warm-pools/{wid}", write, h.deleteWarmPool),
		{pattern: "GET " + apiPrefix + "/socket.io/", fn: h.socketIO, public: true}, // authenticates in its CONNECT packet (socketOps)
		{pattern: previewPrefix + "/{id}/{port}", fn: h.servePreview, public: true}, // sbx's preview proxy checks the key or token (internal/api/ports.go)
		{pattern: previewPrefix + "/{id}/{port}/{path...}", fn: h.servePreview, public: true},

		// Toolbox (process.go, files.go, sessions.go, pty.go, interpreter.go, git.go).
		tb("POST", "/process/execute", exec, h.execute),
		tb("POST", "/process/code-run", exec, h.codeRun),
		tb("GET", "/work-dir", execRead, h.workDir),
		tb("GET", "/system/metrics", execRead, h.systemMetrics),
		tb("GET", "/user-home-dir", execRead, h.homeDir),
		tb("POST", "/env", exec, h.updateEnv),
		tb("POST", "/process/session", exec, h.createSession),
		tb("GET", "/process/session", execRead, h.listSessions),
		tb("GET", "/process/session/{session}", execRead, h.getSession),
		tb("DELETE", "/process/session/{session}", exec, h.deleteSession),
		tb("POST", "/process/session/{session}/exec", exec, h.sessionExec),
		tb("GET", "/process/session/{session}/command/{command}", execRead, h.getSessionCommand),
		tb("GET", "/process/session/{session}/command/{command}/logs", execRead, h.commandLogs),
		tb("POST", "/process/session/{session}/command/{command}/input", exec, h.sendSessionInput),
		tb("GET", "/process/session/entrypoint", execRead, entrypointUnsupported),
		tb("GET", "/process/session/entrypoint/logs", execRead, entrypointUnsupported),
		tb("GET", "/process/pty/create-connect", exec, h.ptyCreateConnect),
		tb("GET", "/process/pty", execRead, h.listPTYs),
		tb("GET", "/process/pty/{pty}", execRead, h.getPTY),
		tb("DELETE", "/process/pty/{pty}", exec, h.deletePTY),
		tb("POST", "/process/pty/{pty}/resize", exec, h.resizePTY),
		tb("GET", "/process/pty/{pty}/connect", exec, h.ptyConnect),
		tb("GET", "/process/interpreter/execute", exec, h.interpreterExecute),
		tb("POST", "/process/interpreter/context", exec, h.createContext),
		tb("GET", "/process/interpreter/context", execRead, h.listContexts),
		tb("DELETE", "/process/interpreter/context/{cid}", exec, h.deleteContext),
		tb("POST", "/git/clone", exec, h.gitClone),
		tb("GET", "/git/status", execRead, h.gitStatus),
		tb("GET", "/git/branches", execRead, h.gitBranches),
		tb("POST", "/git/branches", exec, h.gitCreateBranch),
		tb("POST", "/git/checkout", exec, h.gitCheckout),
		tb("POST", "/git/add", exec, h.gitAdd),
		tb("POST", "/git/commit", exec, h.gitCommit),
		tb("POST", "/git/push", exec, h.gitPush),
		tb("POST", "/git/pull", exec, h.gitPull),
		tb("GET", "/git/history", execRead, h.gitHistory),
		tb("POST", "/git/init", exec, h.gitInit),
		tb("DELETE", "/git/branches", exec, h.gitDeleteBranch),
		tb("GET", "/git/remotes", execRead, h.gitListRemotes),
		tb("POST", "/git/remotes", exec, h.gitAddRemote),
		tb("POST", "/git/reset", exec, h.gitReset),
		tb("POST", "/git/restore", exec, h.gitRestore),
		tb("POST", "/git/config", exec, h.gitSetConfig),
		tb("GET", "/git/config", execRead, h.gitGetConfig),
		tb("POST", "/git/config/user", exec, h.gitConfigureUser),
		tb("GET", "/files", execRead, h.listFiles),
		tb("DELETE", "/files", exec, h.deleteFile),
		tb("GET", "/files/info", execRead, h.fileInfo),
		tb("POST", "/files/folder", exec, h.createFolder),
		tb("POST", "/files/move", exec, h.moveFile),
		tb("GET", "/files/download", execRead, h.downloadFile),
		tb("POST", "/files/bulk-download", exec, h.bulkDownload),
		tb("POST", "/files/bulk-upload", exec, h.bulkUpload),
		tb("POST", "/files/permissions", exec, h.setPermissions),
		tb("GET", "/files/find", execRead, h.findInFiles),
		tb("GET", "/files/search", execRead, h.searchFiles),
		tb("POST", "/files/replace", exec, h.replaceInFiles),

		// Language servers (lsp.go).
		tb("POST", "/lsp/start", exec, h.lspServer(agentapi.LSPStart)),
		tb("POST", "/lsp/stop", exec, h.lspServer(agentapi.LSPStop)),
		tb("POST", "/lsp/did-open", exec, h.lspDocument(agentapi.LSPDidOpen)),
		tb("POST", "/lsp/did-close", exec, h.lspDocument(agentapi.LSPDidClose)),
		tb("GET", "/lsp/document-symbols", execRead, h.lspDocumentSymbols),
		tb("GET", "/lsp/workspacesymbols", execRead, h.lspWorkspaceSymbols),
		tb("POST", "/lsp/completions", exec, h.lspCompletions),

		// Computer use on sbx's desktop (computeruse.go).
		tb("POST", "/computeruse/start", exec, h.computerUseStart),
		tb("POST", "/computeruse/stop", exec, h.computerUseStop),
		tb("GET", "/computeruse/status", execRead, h.computerUseStatus),
		tb("GET", "/computeruse/process-status", execRead, h.computerUseStatus),
		tb("GET", "/computeruse/process/{name}/status", execRead, h.computerUseProcessStatus),
		tb("POST", "/computeruse/process/{name}/restart", exec, computerUseUnsupported("restartProcess")),
		tb("GET", "/computeruse/process/{name}/logs", execRead, computerUseUnsupported("getProcessLogs")),
		tb("GET", "/computeruse/process/{name}/errors", execRead, computerUseUnsupported("getProcessErrors")),
		tb("GET", "/computeruse/mouse/position", execRead, h.mousePosition),
		tb("POST", "/computeruse/mouse/move", exec, h.mouseMove),
		tb("POST", "/computeruse/mouse/click", exec, h.mouseClick),
		tb("POST", "/computeruse/mouse/drag", exec, h.mouseDrag),
		tb("POST", "/computeruse/mouse/scroll", exec, h.mouseScroll),
		tb("POST", "/computeruse/keyboard/type", exec, h.keyboardType),
		tb("POST", "/computeruse/keyboard/key", exec, h.keyboardKey),
		tb("POST", "/computeruse/keyboard/hotkey", exec, h.keyboardKey),
		tb("GET", "/computeruse/screenshot", execRead, h.screenshot(false)),
		tb("GET", "/computeruse/screenshot/region", execRead, h.screenshot(false)),
		tb("GET", "/computeruse/screenshot/compressed", execRead, h.screenshot(true)),
		tb("GET", "/computeruse/screenshot/region/compressed", execRead, h.screenshot(true)),
		tb("GET", "/computeruse/display/info", execRead, h.displayInfo),
		tb("GET", "/computeruse/display/windows", execRead, h.displayWindows),
		tb("POST", "/computeruse/recordings/start", exec, h.recordingStart), // recording.go
		tb("POST", "/computeruse/recordings/stop", exec, h.recordingStop),
		tb("GET", "/computeruse/recordings", execRead, h.recordingList),
		tb("GET", "/computeruse/recordings/{rec}", execRead, h.recordingGet),
		tb("DELETE", "/computeruse/recordings/{rec}", exec, h.recordingDelete),
		tb("GET", "/computeruse/recordings/{rec}/download", execRead, h.recordingDownload),
		tb("GET", "/computeruse/a11y/tree", execRead, computerUseUnsupported("accessibility")),
		tb("POST", "/computeruse/a11y/find", execRead, computerUseUnsupported("accessibility")),
		tb("POST", "/computeruse/a11y/node/focus", exec, computerUseUnsupported("accessibility")),
		tb("POST", "/computeruse/a11y/node/invoke", exec, computerUseUnsupported("accessibility")),
		tb("POST", "/computeruse/a11y/node/value", exec, computerUseUnsupported("accessibility")),
	}
}
