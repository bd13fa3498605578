package daytona

// routes is every Daytona operation the layer serves. Paths are the SDK's
// (its generated clients @daytona/api-client and @daytona/toolbox-api-client)
// under apiPrefix and toolboxPrefix/{id}.
func (h *Handler) routes() []route {
	api := func(method, path string, fn handlerFunc) route {
		return route{pattern: method + " " + apiPrefix + path, fn: fn}
	}
	tb := func(method, path string, fn handlerFunc) route {
		return route{pattern: method + " " + toolboxPrefix + "/{id}" + path, fn: fn}
	}
	return []route{
		// Control plane (control.go, preview.go, snapshots.go).
		api("POST", "/sandbox", h.createSandbox),
		api("GET", "/sandbox", h.listSandboxes),
		api("GET", "/sandbox/{id}", h.getSandbox),
		api("DELETE", "/sandbox/{id}", h.deleteSandbox),
		api("POST", "/sandbox/{id}/start", h.startSandbox),
		api("POST", "/sandbox/{id}/stop", h.stopSandbox),
		api("POST", "/sandbox/{id}/archive", h.archiveSandbox),
		api("POST", "/sandbox/{id}/pause", h.pauseSandbox),
		api("POST", "/sandbox/{id}/fork", h.forkSandbox),
		api("PUT", "/sandbox/{id}/labels", h.replaceLabels),
		api("POST", "/sandbox/{id}/autostop/{interval}", h.setInterval("autostop")),
		api("POST", "/sandbox/{id}/autopause/{interval}", h.setInterval("autopause")),
		api("POST", "/sandbox/{id}/autoarchive/{interval}", h.setInterval("autoarchive")),
		api("POST", "/sandbox/{id}/autodelete/{interval}", h.setInterval("autodelete")),
		api("POST", "/sandbox/{id}/ttl/{interval}", h.setInterval("ttl")),
		api("GET", "/sandbox/{id}/toolbox-proxy-url", h.toolboxProxyURL),
		api("POST", "/sandbox/{id}/last-activity", h.refreshActivity),
		api("POST", "/sandbox/{id}/snapshot", h.createSnapshot),
		api("POST", "/sandbox/{id}/resize", h.resizeSandbox),
		api("GET", "/sandbox/{id}/ports/{port}/preview-url", h.previewLink),
		api("GET", "/sandbox/{id}/ports/{port}/signed-preview-url", h.signedPreviewLink),
		api("GET", "/snapshots", h.listSnapshots),
		api("GET", "/snapshots/{name}", h.getSnapshot),
		{pattern: "GET " + apiPrefix + "/socket.io/", fn: h.socketIO, public: true}, // authenticates in its CONNECT packet
		{pattern: previewPrefix + "/{id}/{port}", fn: h.servePreview, public: true}, // token checked by sbx's preview proxy
		{pattern: previewPrefix + "/{id}/{port}/{path...}", fn: h.servePreview, public: true},

		// Toolbox (process.go, files.go, sessions.go, pty.go, interpreter.go, git.go).
		tb("POST", "/process/execute", h.execute),
		tb("POST", "/process/code-run", h.codeRun),
		tb("GET", "/work-dir", h.workDir),
		tb("GET", "/user-home-dir", h.homeDir),
		tb("POST", "/env", h.updateEnv),
		tb("POST", "/process/session", h.createSession),
		tb("GET", "/process/session", h.listSessions),
		tb("GET", "/process/session/{session}", h.getSession),
		tb("DELETE", "/process/session/{session}", h.deleteSession),
		tb("POST", "/process/session/{session}/exec", h.sessionExec),
		tb("GET", "/process/session/{session}/command/{command}", h.getSessionCommand),
		tb("GET", "/process/session/{session}/command/{command}/logs", h.commandLogs),
		tb("GET", "/process/pty/create-connect", h.ptyCreateConnect),
		tb("GET", "/process/pty", h.listPTYs),
		tb("GET", "/process/pty/{pty}", h.getPTY),
		tb("DELETE", "/process/pty/{pty}", h.deletePTY),
		tb("POST", "/process/pty/{pty}/resize", h.resizePTY),
		tb("GET", "/process/pty/{pty}/connect", h.ptyConnect),
		tb("GET", "/process/interpreter/execute", h.interpreterExecute),
		tb("POST", "/process/interpreter/context", h.createContext),
		tb("GET", "/process/interpreter/context", h.listContexts),
		tb("DELETE", "/process/interpreter/context/{cid}", h.deleteContext),
		tb("POST", "/git/clone", h.gitClone),
		tb("GET", "/git/status", h.gitStatus),
		tb("GET", "/git/branches", h.gitBranches),
		tb("POST", "/git/branches", h.gitCreateBranch),
		tb("POST", "/git/checkout", h.gitCheckout),
		tb("POST", "/git/add", h.gitAdd),
		tb("POST", "/git/commit", h.gitCommit),
		tb("POST", "/git/push", h.gitPush),
		tb("POST", "/git/pull", h.gitPull),
		tb("GET", "/git/history", h.gitHistory),
		tb("GET", "/files", h.listFiles),
		tb("DELETE", "/files", h.deleteFile),
		tb("GET", "/files/info", h.fileInfo),
		tb("POST", "/files/folder", h.createFolder),
		tb("POST", "/files/move", h.moveFile),
		tb("GET", "/files/download", h.downloadFile),
		tb("POST", "/files/bulk-download", h.bulkDownload),
		tb("POST", "/files/bulk-upload", h.bulkUpload),
		tb("POST", "/files/permissions", h.setPermissions),
		tb("GET", "/files/find", h.findInFiles),
		tb("GET", "/files/search", h.searchFiles),
		tb("POST", "/files/replace", h.replaceInFiles),
	}
}
