package api

import (
	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/wire"
)

// route is one API operation. The mux and the OpenAPI document are both built
// from this table, so they cannot drift apart.
type route struct {
	method, pattern string
	summary         string
	handler         handler    // writes its answer or returns the error to answer with
	public          bool       // no API key needed
	scope           auth.Scope // what the key must hold (auth_test.go: every non-public route names one)
	passive         bool       // under /v1/sandboxes/{id}/ but not activity (see lifecycle.go)
	lookup          bool       // reads the running instance only: never starts it, not activity (lookup.go)
	onlyRunning     bool       // reads a running instance's files or servers: never starts it, else 409 (lookup.go)
	query           []param    // query parameters
	body            any        // request body: a value of its type, the document's example; rawBody for bytes
	status          int        // success status
	response        any        // response type; nil for none, rawBody for bytes, ndjson for a stream

	// For the OpenAPI document (openapi*.go); TestRoutesHaveDocMetadata
	// names any row missing what it needs.
	name        string // operationId, lowerCamelCase verb first: "createSandbox"
	tag         string // group; default from the path (tagOf)
	events      any    // the NDJSON line type when it streams (ndjson response, stream=true or follow=true)
	frames      any    // WebSocket (status 101): the JSON type of its text frames
	otherStatus int    // a second success status (PUT ensure: 201 created; ports: 200 existed)

	// codes are the error codes particular to this operation, for the
	// document; codesOf (codes.go) adds those every route of its kind has.
	codes []wire.Code
}

// param is a query parameter; typ is "string", "integer", "number",
// "boolean", "[]string" (repeatable) or "state" (a sandbox State).
type param struct{ name, typ, doc string }

type (
	rawBody struct{}
	ndjson  struct{}
)

func (s *Server) routes() []route {
	sandboxQ := []param{
		{"state", "state", "only sandboxes in this state"},
		{"label", "[]string", "k=v; repeat to require several labels"},
	}
	eventsQ := []param{
		{"after", "integer", "only events with a higher seq"},
		{"limit", "integer", "at most this many (default 1000)"},
		{"follow", "boolean", "stream events as NDJSON as they happen"},
	}
	pathQ := param{"path", "string", "path inside the sandbox; relative paths start at the workdir"}
	return []route{
		{
			method: "GET", pattern: "/healthz", name: "getHealth",
			summary: "Daemon liveness",
			handler: s.health, public: true,
			status: 200, response: map[string]bool{},
		},
		{
			method: "GET", pattern: "/v1/openapi.json", name: "getOpenAPIDocument",
			summary: "This document (OpenAPI 3.1); needs no key",
			handler: s.openapi, scope: auth.ScopeSandboxesRead, public: true,
			status: 200, response: map[string]any{},
		},
		{
			method: "GET", pattern: "/metrics", name: "getMetrics",
			summary: "Prometheus metrics (text format); needs the admin key or the metrics key (--metrics-token)",
			handler: s.serveMetrics, scope: auth.ScopeMetricsRead, public: true,
			status: 200, response: rawBody{},
		},

		{
			method: "POST", pattern: "/v1/sandboxes", name: "createSandbox",
			summary: "Create and start a sandbox",
			handler: s.createSandbox, scope: auth.ScopeSandboxesWrite,
			body: wire.CreateSandboxRequest{
				Name: "web", Image: "python", Labels: map[string]string{"project": "demo"},
				CPU: 2, MemoryMiB: 2048, Env: map[string]string{"DEBUG": "1"}, AutoStopSeconds: new(600),
			},
			status: 201, response: wire.Sandbox{},
			codes: codesCreate,
		},
		{
			method: "GET", pattern: "/v1/sandboxes", name: "listSandboxes",
			summary: "List sandboxes",
			handler: s.listSandboxes, scope: auth.ScopeSandboxesRead,
			query:  sandboxQ,
			status: 200, response: []wire.Sandbox{},
			codes: []wire.Code{wire.CodeInvalidLabel, wire.CodeInvalidState},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}", name: "getSandbox",
			summary: "Get a sandbox by id or name",
			handler: s.getSandbox, scope: auth.ScopeSandboxesRead,
			status: 200, response: wire.Sandbox{},
		},
		{
			method: "PUT", pattern: "/v1/sandboxes/{id}", name: "ensureSandbox",
			summary: "Get or create the sandbox with this name (201 when created, 200 when it existed)",
			handler: s.ensureSandbox, scope: auth.ScopeSandboxesWrite,
			body: wire.CreateSandboxRequest{
				Name: "web", Image: "python", Labels: map[string]string{"project": "demo"},
				CPU: 2, MemoryMiB: 2048, Env: map[string]string{"DEBUG": "1"}, AutoStopSeconds: new(600),
			},
			status: 200, otherStatus: 201, response: wire.Sandbox{},
			codes: append([]wire.Code{wire.CodeNameMismatch}, codesCreate...),
		},
		{
			method: "DELETE", pattern: "/v1/sandboxes/{id}", name: "deleteSandbox",
			summary: "Delete a sandbox (202, or 204 with wait=true once it is gone); 409 SANDBOX_HAS_FORKS while " +
				"it has forks, unless cascade=true",
			handler: s.deleteSandbox, scope: auth.ScopeSandboxesWrite,
			query: []param{
				{"wait", "boolean", "block until everything is removed"},
				{"cascade", "boolean", "delete its forks, their forks and so on first"},
			},
			status: 202, otherStatus: 204, response: wire.Sandbox{},
			codes: []wire.Code{wire.CodeSandboxHasForks, wire.CodeSandboxBusy},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/start", name: "startSandbox",
			summary: "Start a stopped sandbox",
			handler: s.startSandbox, scope: auth.ScopeSandboxesWrite,
			status: 200, response: wire.Sandbox{},
			codes: []wire.Code{
				wire.CodeSandboxBusy, wire.CodeSandboxPaused, wire.CodeImageNotFound, wire.CodeRuntimeUnavailable,
				wire.CodeNetworkFull, wire.CodeArchiveUnavailable,
			},
		},
		{
			method: "PATCH", pattern: "/v1/sandboxes/{id}", name: "updateSandbox",
			summary: "Change a sandbox's lifecycle policy, environment, limits or labels (fields left out keep " +
				"their value; env: a value sets a variable, null unsets it, for every process started from " +
				"now on; cpu, memoryMiB, pidsLimit apply at once to a running class-container instance; " +
				"labels replace all labels)",
			handler: s.updateSandbox, scope: auth.ScopeSandboxesWrite,
			body: wire.UpdateSandboxRequest{
				AutoStopSeconds: new(3600), Env: map[string]*string{"DEBUG": nil, "LOG_LEVEL": new("info")},
				Labels: map[string]string{"project": "demo", "stage": "test"},
			},
			status: 200, response: wire.Sandbox{},
			codes: []wire.Code{
				wire.CodeInvalidPolicy, wire.CodeInvalidEnv, wire.CodeSandboxPaused, wire.CodeSandboxUnavailable,
				wire.CodeInvalidCPU, wire.CodeInvalidMemory, wire.CodeInvalidPidsLimit, wire.CodeInvalidLabel,
				wire.CodeMemoryBelowUsage,
			},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/archive", name: "archiveSandbox",
			summary: "Archive a stopped sandbox's files into the blob store; the next start restores them",
			handler: s.archiveSandbox, scope: auth.ScopeSandboxesWrite, passive: true,
			status: 200, response: wire.Sandbox{},
			codes: []wire.Code{wire.CodeSandboxNotStopped, wire.CodeArchiveUnavailable},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/wait", name: "waitSandbox",
			summary: "Wait until a sandbox is in a state; 503 WAIT_TIMEOUT if it is not within timeoutSeconds",
			handler: s.waitSandbox, scope: auth.ScopeSandboxesRead, passive: true,
			query: []param{
				{"state", "state", "the state to wait for: started, stopped, archived, deleted, …"},
				{"timeoutSeconds", "integer", "how long to wait (default 60, at most 3600)"},
			},
			status: 200, response: wire.Sandbox{},
			codes: []wire.Code{wire.CodeInvalidState, wire.CodeInvalidTimeout, wire.CodeWaitTimeout},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/events", name: "listSandboxEvents",
			summary: "A sandbox's state changes with reasons; with follow=true an NDJSON stream of EventLines",
			handler: s.sandboxEvents, scope: auth.ScopeSandboxesRead, passive: true,
			query:  eventsQ,
			status: 200, response: []wire.Event{}, events: wire.EventLine{},
		},
		{
			method: "GET", pattern: "/v1/events", name: "listEvents",
			summary: "State changes of all sandboxes, deletions included; with follow=true an NDJSON stream of " +
				"EventLines",
			handler: s.allEvents, scope: auth.ScopeSandboxesRead,
			query:  eventsQ,
			status: 200, response: []wire.Event{}, events: wire.EventLine{},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/logs", name: "getSandboxLogs",
			summary: "Output of the main process (entrypoint) as NDJSON LogLines; with follow=true it streams " +
				"until the sandbox stops and keeps it active",
			handler: s.mainLogs, scope: auth.ScopeSandboxesRead, passive: true,
			query: []param{
				{"follow", "boolean", "keep streaming new output"},
				{"tail", "string", "only the last N lines of the kept output (a whole number, or all)"},
				{"since", "string", "only output written since then: a duration back from now (5m), an RFC 3339 time or Unix seconds"},
				{"timestamps", "boolean", "send when each chunk was written, in its time field"},
			},
			status: 200, response: ndjson{}, events: wire.LogLine{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/stop", name: "stopSandbox",
			summary: "Stop a sandbox: SIGTERM, grace period, SIGKILL",
			handler: s.stopSandbox, scope: auth.ScopeSandboxesWrite,
			query: []param{
				{"graceSeconds", "integer", "seconds between SIGTERM and SIGKILL (default 10)"},
				{"force", "boolean", "SIGKILL at once"},
			},
			status: 200, response: wire.Sandbox{},
			codes: []wire.Code{wire.CodeInvalidGrace, wire.CodeSandboxBusy},
		},

		{
			method: "POST", pattern: "/v1/sandboxes/{id}/exec", name: "execCommand",
			summary: "Run a command; with stream=true the answer is NDJSON ExecEvents",
			handler: s.exec, scope: auth.ScopeExec,
			query: []param{
				{"stream", "boolean", "stream events as NDJSON"},
			},
			body:   wire.ExecRequest{Cmd: []string{"python3", "-c", "print(6*7)"}, Cwd: "src", TimeoutSeconds: 30},
			status: 200, response: wire.ExecResult{}, events: wire.ExecEvent{},
			codes: codesExec,
		},
		{
			method: "PUT", pattern: "/v1/sandboxes/{id}/files", name: "writeFile",
			summary: "Upload a file (body streamed); a symlink at path is written through",
			handler: s.writeFile, scope: auth.ScopeExec,
			query: []param{
				pathQ,
				{"mode", "string", "octal permission bits (default 0644)"},
				{"parents", "boolean",
					"create missing parent directories (default true; false answers 404 PARENT_NOT_FOUND)"},
			},
			body:   rawBody{},
			status: 200, response: wire.FileInfo{},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/files", name: "readFile",
			summary: "Download a file (streamed)",
			handler: s.readFile, scope: auth.ScopeExec, onlyRunning: true,
			query: []param{
				pathQ,
			},
			status: 200, response: rawBody{},
		},
		{
			method: "DELETE", pattern: "/v1/sandboxes/{id}/files", name: "deleteFile",
			summary: "Delete a file or directory",
			handler: s.proxy, scope: auth.ScopeExec,
			query: []param{
				pathQ,
				{"recursive", "boolean", "delete a non-empty directory"},
			},
			status: 204,
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/files/list", name: "listFiles",
			summary: "List a directory",
			handler: s.proxy, scope: auth.ScopeExec, onlyRunning: true,
			query: []param{
				pathQ,
				{"depth", "integer",
					"levels to list, 1 to 32 (default 1); more than 50000 entries answer 400 LIST_TOO_LARGE"},
			},
			status: 200, response: []wire.FileInfo{},
		},
		{
			method: "PUT", pattern: "/v1/sandboxes/{id}/files/tar", name: "uploadTar",
			summary: "Extract a tar stream (plain or gzip) into a directory; refused whole if an entry is " +
				"absolute, climbs out with .., lies below a symlink or is a device or fifo",
			handler: s.proxy, scope: auth.ScopeExec,
			query: []param{
				{"path", "string", "directory to extract into"},
				{"parents", "boolean", "create the directory and its parents (default true)"},
			},
			body:   rawBody{},
			status: 200, response: wire.FileInfo{},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/files/tar", name: "downloadTar",
			summary: "Download a directory as a tar stream (directories, files, symlinks)",
			handler: s.proxy, scope: auth.ScopeExec, onlyRunning: true,
			query: []param{
				{"path", "string", "directory to download"},
			},
			status: 200, response: rawBody{},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/files/stat", name: "statFile",
			summary: "Describe a file",
			handler: s.proxy, scope: auth.ScopeExec, onlyRunning: true,
			query: []param{
				pathQ,
			},
			status: 200, response: wire.FileInfo{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/files/mkdir", name: "makeDirectory",
			summary: "Create a directory",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.MkdirRequest{Path: "src/app", Parents: true},
			status: 200, response: wire.FileInfo{},
		},
		{
			method: "PUT", pattern: "/v1/sandboxes/{id}/files/owned", name: "writeFileOwned",
			summary: "Upload a file for an account: the file and the parent directories the upload makes " +
				"belong to owner",
			handler: s.proxy, scope: auth.ScopeExec,
			query: []param{
				pathQ,
				{"owner", "string", "account name, uid or uid:gid"},
				{"mode", "string", "octal permission bits (default 0644)"},
				{"parents", "boolean", "create missing parent directories (default true)"},
			},
			body:   rawBody{},
			status: 200, response: wire.FileInfo{},
			codes: []wire.Code{wire.CodeUnknownUser},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/files/mkdir/owned", name: "makeDirectoryOwned",
			summary: "Create a directory for an account: the directories made belong to owner",
			handler: s.proxy, scope: auth.ScopeExec,
			query: []param{
				pathQ,
				{"owner", "string", "account name, uid or uid:gid"},
				{"mode", "string", "octal permission bits (default 0755)"},
				{"parents", "boolean", "create missing parents (default true); an existing directory is then no error"},
			},
			status: 200, response: wire.FileInfo{},
			codes: []wire.Code{wire.CodeUnknownUser},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/files/move", name: "moveFile",
			summary: "Move or rename a file",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.MoveRequest{From: "out.txt", To: "results/out.txt", Overwrite: true},
			status: 200, response: wire.FileInfo{},
		},

		// Done by the agent next to the files and sessions (internal/agent/fileops.go, sessioncmds.go,
		// git_repo.go).
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/files/permissions", name: "setFilePermissions",
			summary: "Set a file's mode, owner and group (names of the sandbox's /etc/passwd and /etc/group, or " +
				"numbers); empty fields stay",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.PermissionsRequest{Path: "run.sh", Mode: "0755", Owner: "user"},
			status: 200, response: wire.FileInfo{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/files/grep", name: "grepFiles",
			summary: "Lines of the text files under a path that contain a string, at most max (truncated says more " +
				"were left out)",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.GrepRequest{Path: "src", Pattern: "TODO", Max: 100},
			status: 200, response: wire.GrepResult{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/files/glob", name: "globFiles",
			summary: "Files and directories under a path whose name matches a pattern (as find -name), at most max",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.GlobRequest{Path: "src", Pattern: "*.py"},
			status: 200, response: wire.GlobResult{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/files/replace", name: "replaceInFiles",
			summary: "Replace every occurrence of a string in each file (each rewritten whole, mode and owner " +
				"kept); one result per file",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.ReplaceRequest{Files: []string{"src/app.py"}, Old: "debug = True", New: "debug = False"},
			status: 200, response: []wire.ReplaceResult{},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/user", name: "lookupUser",
			summary: "An account of the sandbox's /etc/passwd (default root, whom commands run as): uid, gid, home",
			handler: s.proxy, scope: auth.ScopeExec, onlyRunning: true,
			query:  []param{{"name", "string", "a user name or uid"}},
			status: 200, response: wire.User{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/sessions/{session}/commands", name: "runSessionCommand",
			summary: "Run a command in a session and keep its record (id, output, exit code); async answers at " +
				"once and the command reads the input sent to it",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.SessionRunRequest{Command: "npm test", Async: true},
			status: 200, response: wire.SessionCommand{},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/sessions/{session}/commands", name: "listSessionCommands",
			summary: "A session's recorded commands",
			handler: s.proxy, scope: auth.ScopeExec, lookup: true,
			status: 200, response: []wire.SessionCommand{},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/sessions/{session}/commands/{command}", name: "getSessionCommand",
			summary: "A recorded command: its text and, once it ended, its exit code",
			handler: s.proxy, scope: auth.ScopeExec, lookup: true,
			status: 200, response: wire.SessionCommand{},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/sessions/{session}/commands/{command}/logs", name: "sessionCommandLogs",
			summary: "A recorded command's output; with follow=true NDJSON SessionLogEvents until it ends",
			handler: s.streamProxy, scope: auth.ScopeExec, lookup: true,
			query:  []param{{"follow", "boolean", "stream until the command ends"}},
			status: 200, response: wire.SessionLogs{},
			events: wire.SessionLogEvent{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/sessions/{session}/commands/{command}/input", name: "sendSessionCommandInput",
			summary: "Write to the stdin of a command run async",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.SessionInput{Data: "yes\n"},
			status: 204,
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/git/init", name: "gitInit",
			summary: "Make a repository (bare or with a worktree) in a directory",
			handler: s.git, scope: auth.ScopeExec,
			body:   wire.GitInitRequest{Path: "repo", InitialBranch: "main"},
			status: 200,
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/git/branches/delete", name: "gitDeleteBranch",
			summary: "Delete a local branch that is not the current one",
			handler: s.git, scope: auth.ScopeExec,
			body:   wire.GitBranchRequest{Path: "repo", Name: "old-feature"},
			status: 200,
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/git/remotes/list", name: "gitRemotes",
			summary: "A repository's remotes and their URLs (credentials removed)",
			handler: s.git, scope: auth.ScopeExec,
			body:   wire.GitRepoRequest{Path: "repo"},
			status: 200, response: []wire.GitRemote{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/git/remotes", name: "gitAddRemote",
			summary: "Add a remote (overwrite: replace one of that name; fetch: fetch it once added)",
			handler: s.git, scope: auth.ScopeExec,
			body:   wire.GitAddRemoteRequest{Path: "repo", Name: "origin", URL: "https://git.example.com/acme/app.git"},
			status: 200,
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/git/config", name: "gitConfig",
			summary: "Read or set one git configuration option, global (the user's ~/.gitconfig) or of a repository",
			handler: s.git, scope: auth.ScopeExec,
			body:   wire.GitConfigRequest{Scope: "global", Key: "user.name", Value: new("Ada Lovelace")},
			status: 200, response: wire.GitConfigValue{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/git/credentials", name: "gitCredentials",
			summary: "Store credentials for one git host in the sandbox's credential store (~/.git-credentials, " +
				"mode 0600): later clones, pushes and pulls of that host without credentials use them",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.GitCredentialsRequest{Username: "ada", Password: "token", Host: "git.example.com", Protocol: "https"},
			status: 204,
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/git/reset", name: "gitReset",
			summary: "Move HEAD and the current branch to a revision (default HEAD) and reset the index (mixed), " +
				"also the worktree (hard), or neither (soft); files: only those index paths",
			handler: s.git, scope: auth.ScopeExec,
			body:   wire.GitResetRequest{Path: "repo", Mode: "hard", Target: "HEAD~1"},
			status: 200, response: wire.GitStatus{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/git/restore", name: "gitRestore",
			summary: "Restore files of the worktree from the index (default) and/or of the index from HEAD (staged)",
			handler: s.git, scope: auth.ScopeExec,
			body:   wire.GitRestoreRequest{Path: "repo", Files: []string{"README.md"}, Staged: true},
			status: 200, response: wire.GitStatus{},
		},

		// Background processes, sessions, terminals and watches (interactive.go).
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/processes", name: "startProcess",
			summary: "Start a background process in its own process group; it outlives the request",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.StartProcessRequest{ID: "server", Cmd: []string{"python3", "-m", "http.server", "8000"}},
			status: 201, response: wire.Process{},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/processes", name: "listProcesses",
			summary: "List background processes, running and exited",
			handler: s.proxy, scope: auth.ScopeExec, lookup: true,
			status: 200, response: []wire.Process{},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/processes/{process}", name: "getProcess",
			summary: "Get a background process: state, exit code, signal, times",
			handler: s.proxy, scope: auth.ScopeExec, lookup: true,
			status: 200, response: wire.Process{},
		},
		{
			method: "DELETE", pattern: "/v1/sandboxes/{id}/processes/{process}", name: "killProcess",
			summary: "Kill a process's group if it still runs, and forget it",
			handler: s.proxy, scope: auth.ScopeExec,
			status: 204,
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/processes/{process}/logs", name: "getProcessLogs",
			summary: "A process's output as NDJSON ExecEvents (stdout/stderr chunks numbered by seq), ending with " +
				"\"exit\" once it has exited or, without follow, \"end\"",
			handler: s.streamProxy, scope: auth.ScopeExec, lookup: true,
			query: []param{
				{"offset", "integer", "only chunks with a higher seq (the last seq you have)"},
				{"follow", "boolean", "keep streaming until the process exits"},
			},
			status: 200, response: ndjson{}, events: wire.ExecEvent{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/processes/{process}/stdin", name: "writeProcessStdin",
			summary: "Write the body to the process's stdin",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   rawBody{},
			status: 204,
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/processes/{process}/stdin/close", name: "closeProcessStdin",
			summary: "Close the process's stdin",
			handler: s.proxy, scope: auth.ScopeExec,
			status: 204,
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/processes/{process}/signal", name: "signalProcess",
			summary: "Send a signal (name or number) to the process's whole group",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.SignalRequest{Signal: "SIGINT"},
			status: 200, response: wire.Process{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/processes/{process}/wait", name: "waitProcess",
			summary: "Wait for the process to exit",
			handler: s.proxy, scope: auth.ScopeExec,
			query: []param{
				{"timeoutSeconds", "number", "give up after this long with 503 WAIT_TIMEOUT (default: no limit)"},
			},
			status: 200, response: wire.Process{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/processes/{process}/wait-for-log", name: "waitForProcessLog",
			summary: "Wait for an output line matching a substring or regex (409 PROCESS_EXITED if it exits first)",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.WaitForLogRequest{Substring: "Serving HTTP", TimeoutSeconds: 30},
			status: 200, response: wire.LogMatch{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/processes/{process}/wait-for-port", name: "waitForProcessPort",
			summary: "Wait for a TCP port inside the sandbox to accept connections, or to answer HTTP with a " +
				"status (409 PROCESS_EXITED if it exits first)",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.WaitForPortRequest{Port: 8000, Protocol: "http", Path: "/", TimeoutSeconds: 30},
			status: 200, response: wire.PortReady{},
		},

		{
			method: "POST", pattern: "/v1/sandboxes/{id}/sessions", name: "createSession",
			summary: "Start a persistent shell session",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.CreateSessionRequest{ID: "build", Cwd: "/workspace", TimeoutSeconds: 120},
			status: 201, response: wire.Session{},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/sessions", name: "listSessions",
			summary: "List sessions",
			handler: s.proxy, scope: auth.ScopeExec, lookup: true,
			status: 200, response: []wire.Session{},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/sessions/{session}", name: "getSession",
			summary: "Get a session",
			handler: s.proxy, scope: auth.ScopeExec, lookup: true,
			status: 200, response: wire.Session{},
		},
		{
			method: "DELETE", pattern: "/v1/sandboxes/{id}/sessions/{session}", name: "deleteSession",
			summary: "Kill a session's shell and what it started",
			handler: s.proxy, scope: auth.ScopeExec,
			status: 204,
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/sessions/{session}/exec", name: "execInSession",
			summary: "Run a command in a session (cd and exported variables persist); with stream=true the answer " +
				"is NDJSON SessionEvents",
			handler: s.streamProxy, scope: auth.ScopeExec,
			query: []param{
				{"stream", "boolean", "stream events as NDJSON"},
			},
			body:   wire.SessionExecRequest{Command: "cd src && make"},
			status: 200, response: wire.SessionExecResult{}, events: wire.SessionEvent{},
		},

		{
			method: "POST", pattern: "/v1/sandboxes/{id}/ptys", name: "createPTY",
			summary: "Start a program (default a shell) on a new terminal",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.CreatePTYRequest{Cmd: []string{"/bin/bash"}, Cols: 120, Rows: 40},
			status: 201, response: wire.PTY{},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/ptys", name: "listPTYs",
			summary: "List terminals",
			handler: s.proxy, scope: auth.ScopeExec, lookup: true,
			status: 200, response: []wire.PTY{},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/ptys/{pty}", name: "getPTY",
			summary: "Get a terminal",
			handler: s.proxy, scope: auth.ScopeExec, lookup: true,
			status: 200, response: wire.PTY{},
		},
		{
			method: "DELETE", pattern: "/v1/sandboxes/{id}/ptys/{pty}", name: "killPTY",
			summary: "Kill every process of a terminal's session and forget it",
			handler: s.proxy, scope: auth.ScopeExec,
			status: 204,
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/ptys/{pty}/input", name: "writePTYInput",
			summary: "Type into a terminal without attaching (at most 1 MiB a request)",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   rawBody{},
			status: 204,
			codes:  []wire.Code{wire.CodePTYExited, wire.CodeBodyTooLarge},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/ptys/{pty}/resize", name: "resizePTY",
			summary: "Set a terminal's size",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.ResizeRequest{Cols: 160, Rows: 48},
			status: 200, response: wire.PTY{},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/ptys/{pty}/attach", name: "attachPTY",
			summary: "Attach to a terminal over a WebSocket: binary frames are its bytes both ways, text frames " +
				"JSON PTYControl (\"resize\" from the client; \"exit\" from the server, then a close; " +
				"\"error\" INSTANCE_LOST naming the stop reason when the instance ends first, then a close " +
				"1001 whose reason names it too). Recent output is replayed first. Closing detaches.",
			handler: s.attachPTY, scope: auth.ScopeExec, lookup: true,
			query: []param{
				{"replay", "boolean", "send the retained recent output first (default true)"},
			},
			status: 101, frames: wire.PTYControl{},
		},

		// The desktop of a sandbox (agent: internal/agent/desktop*.go; view: desktop.go).
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/desktop/start", name: "startDesktop",
			summary: "Start the desktop (Xvfb, window manager, panel, VNC, noVNC) supervised by the agent; " +
				"answers once the display accepts connections. A running desktop of the same size answers as " +
				"it is; another size is 409 DESKTOP_RUNNING",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.DesktopStartRequest{Width: 1920, Height: 1080},
			status: 200, response: wire.DesktopStatus{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/desktop/stop", name: "stopDesktop",
			summary: "Stop the desktop's programs (apps on it lose their display)",
			handler: s.proxy, scope: auth.ScopeExec,
			status: 200, response: wire.DesktopStatus{},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/desktop/status", name: "getDesktopStatus",
			summary: "Whether the desktop runs, its screen size and its programs (pids, restarts)",
			handler: s.proxy, scope: auth.ScopeExec, onlyRunning: true,
			status: 200, response: wire.DesktopStatus{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/desktop/programs/{program}/restart", name: "restartDesktopProgram",
			summary: "Restart one of the desktop's programs (xvfb, wm, panel, vnc, novnc)",
			handler: s.proxy, scope: auth.ScopeExec,
			status: 200, response: wire.DesktopProgram{},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/desktop/programs/{program}/logs", name: "getDesktopProgramLogs",
			summary: "What one of the desktop's programs wrote to its standard output and error",
			handler: s.proxy, scope: auth.ScopeExec, lookup: true,
			status: 200, response: wire.DesktopProgramLogs{},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/desktop/screenshot", name: "takeScreenshot",
			summary: "The screen as PNG (default) or JPEG, whole or a region, optionally with the pointer drawn",
			handler: s.proxy, scope: auth.ScopeExec, onlyRunning: true,
			query:  desktopScreenshotQ,
			status: 200, response: rawBody{},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/desktop/mouse", name: "getCursorPosition",
			summary: "Where the pointer is",
			handler: s.proxy, scope: auth.ScopeExec, onlyRunning: true,
			status: 200, response: wire.DesktopPoint{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/desktop/mouse/move", name: "moveMouse",
			summary: "Move the pointer; answers its new position",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.MouseMoveRequest{X: 640, Y: 400},
			status: 200, response: wire.DesktopPoint{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/desktop/mouse/click", name: "clickMouse",
			summary: "Click (or double-click) a button, at x,y or where the pointer is",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.MouseClickRequest{X: new(640), Y: new(400), Button: "left", Double: true},
			status: 200, response: wire.DesktopPoint{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/desktop/mouse/drag", name: "dragMouse",
			summary: "Press a button at from, move to to, release",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.MouseDragRequest{From: wire.DesktopPoint{X: 100, Y: 100}, To: wire.DesktopPoint{X: 400, Y: 300}},
			status: 200, response: wire.DesktopPoint{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/desktop/mouse/scroll", name: "scrollMouse",
			summary: "Turn the mouse wheel up, down, left or right",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.MouseScrollRequest{Direction: "down", Amount: 3},
			status: 200, response: wire.DesktopPoint{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/desktop/keyboard/type", name: "typeText",
			summary: "Type Unicode text on the focused window (\\n presses Return)",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.TypeTextRequest{Text: "hello world\n"},
			status: 204,
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/desktop/keyboard/press", name: "pressKey",
			summary: "Press a key or chord: \"Return\", \"ctrl+c\", \"alt+tab\"; an unknown key name is 400 " +
				"UNKNOWN_KEY",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.PressKeyRequest{Key: "ctrl+c"},
			status: 204,
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/desktop/windows", name: "listWindows",
			summary: "List the desktop's windows: id, title, geometry, focus",
			handler: s.proxy, scope: auth.ScopeExec, onlyRunning: true,
			status: 200, response: []wire.DesktopWindow{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/desktop/windows/{window}/focus", name: "focusWindow",
			summary: "Raise and focus a window",
			handler: s.proxy, scope: auth.ScopeExec,
			status: 204,
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/desktop/launch", name: "launchApplication",
			summary: "Start an application on the desktop as a background process (DISPLAY set); it is listed " +
				"with the processes",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.LaunchRequest{Cmd: []string{"xterm"}},
			status: 201, response: wire.Process{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/desktop/recordings", name: "startRecording",
			summary: "Start recording the desktop's screen (ffmpeg, H.264 in MP4) into a file in the sandbox " +
				"(/var/lib/sbx/recordings); the image must have ffmpeg",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.RecordingStartRequest{Label: "login-flow"},
			status: 201, response: wire.Recording{},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/desktop/recordings", name: "listRecordings",
			summary: "The sandbox's screen recordings, oldest first",
			handler: s.proxy, scope: auth.ScopeExec, onlyRunning: true,
			status: 200, response: []wire.Recording{},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/desktop/recordings/{recording}", name: "getRecording",
			summary: "A screen recording: its file, state, duration and size",
			handler: s.proxy, scope: auth.ScopeExec, onlyRunning: true,
			status: 200, response: wire.Recording{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/desktop/recordings/{recording}/stop", name: "stopRecording",
			summary: "Stop a recording; answers once its file is finished",
			handler: s.proxy, scope: auth.ScopeExec,
			status: 200, response: wire.Recording{},
		},
		{
			method: "DELETE", pattern: "/v1/sandboxes/{id}/desktop/recordings/{recording}", name: "deleteRecording",
			summary: "Delete a recording and its file (a running one is stopped first)",
			handler: s.proxy, scope: auth.ScopeExec,
			status: 204,
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/desktop/recordings/{recording}/file", name: "downloadRecording",
			summary: "A finished recording's video (video/mp4)",
			handler: s.proxy, scope: auth.ScopeExec, onlyRunning: true,
			status: 200, response: rawBody{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/desktop/view", name: "getDesktopView",
			summary: "Expose the desktop's noVNC page (private unless public) and answer its URL, with the port's " +
				"token or, with expiresInSeconds, a signature",
			handler: s.desktopView, scope: auth.ScopeSandboxesWrite,
			body:   wire.DesktopViewRequest{ExpiresInSeconds: 3600},
			status: 200, response: wire.DesktopView{},
			codes: []wire.Code{
				wire.CodeInvalidExpiry, wire.CodeNoNetwork, wire.CodeNetworkUnavailable, wire.CodePreviewDomainRequired,
			},
		},

		// Language servers in the sandbox (agent: internal/agent/lsp; codes: lsp.go).
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/lsp/start", name: "startLanguageServer",
			summary: "Start the language server of a language (python: pylsp; typescript, javascript: " +
				"typescript-language-server) for a project directory, or answer the one that runs; the image must " +
				"have it (400 LANGUAGE_NOT_AVAILABLE)",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.LSPServerRequest{Language: "python", Project: "/workspace/app"},
			status: 200, response: wire.LSPServer{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/lsp/stop", name: "stopLanguageServer",
			summary: "Stop a project's language server",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.LSPServerRequest{Language: "python", Project: "/workspace/app"},
			status: 204,
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/lsp/did-open", name: "openLanguageServerDocument",
			summary: "Open a file of the project on its language server (its text is read from disk; opening it " +
				"again sends the text again)",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.LSPDocumentRequest{Language: "python", Project: "/workspace/app", Path: "/workspace/app/main.py"},
			status: 204,
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/lsp/did-close", name: "closeLanguageServerDocument",
			summary: "Close a file on the project's language server",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.LSPDocumentRequest{Language: "python", Project: "/workspace/app", Path: "/workspace/app/main.py"},
			status: 204,
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/lsp/document-symbols", name: "languageServerDocumentSymbols",
			summary: "The symbols (classes, functions, variables) of a file of the project",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.LSPDocumentRequest{Language: "python", Project: "/workspace/app", Path: "/workspace/app/main.py"},
			status: 200, response: []wire.LSPSymbol{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/lsp/workspace-symbols", name: "languageServerWorkspaceSymbols",
			summary: "The project's symbols whose name contains a query (a server without workspace symbols, such " +
				"as pylsp, searches its open documents)",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.LSPWorkspaceSymbolsRequest{Language: "python", Project: "/workspace/app", Query: "User"},
			status: 200, response: []wire.LSPSymbol{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/lsp/completions", name: "languageServerCompletions",
			summary: "Completions at a position of a file of the project",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.LSPCompletionRequest{Language: "python", Project: "/workspace/app", Path: "/workspace/app/main.py", Position: wire.LSPPosition{Line: 3, Character: 7}},
			status: 200, response: wire.LSPCompletionList{},
		},

		{
			method: "GET", pattern: "/v1/sandboxes/{id}/watch", name: "watchFiles",
			summary: "Watch a path: an NDJSON stream of WatchEvents (ready, then create, write, remove, rename)",
			handler: s.streamProxy, scope: auth.ScopeExec, onlyRunning: true,
			query: []param{
				{"path", "string", "directory or file to watch"},
				{"recursive", "boolean", "watch subdirectories too"},
				{"include", "[]string", "glob; repeat for several; only matching paths are reported"},
				{"exclude", "[]string", "glob; repeat for several; matching paths and directories are skipped"},
			},
			status: 200, response: ndjson{}, events: wire.WatchEvent{},
		},

		{
			method: "POST", pattern: "/v1/sandboxes/{id}/contexts", name: "createContext",
			summary: "Create a code context: a long-lived python, javascript or bash interpreter whose state " +
				"persists between runs",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.CreateContextRequest{Language: "python", Cwd: "/workspace"},
			status: 201, response: wire.Context{},
			codes: []wire.Code{
				wire.CodeUnknownLanguage, wire.CodeLanguageNotAvailable, wire.CodeLanguageStatelessOnly,
				wire.CodeInterpreterFailed,
			},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/contexts", name: "listContexts",
			summary: "List live code contexts",
			handler: s.proxy, scope: auth.ScopeExec, lookup: true,
			status: 200, response: []wire.Context{},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/contexts/{cid}", name: "getContext",
			summary: "Get a code context (404 CONTEXT_NOT_FOUND once its interpreter is gone)",
			handler: s.proxy, scope: auth.ScopeExec, lookup: true,
			status: 200, response: wire.Context{},
		},
		{
			method: "PUT", pattern: "/v1/sandboxes/{id}/contexts/{cid}", name: "ensureContext",
			summary: "Get the live code context of this id, or start one with it (201)",
			handler: s.proxy, scope: auth.ScopeExec,
			body:   wire.CreateContextRequest{Language: "python", Cwd: "/workspace"},
			status: 200, otherStatus: 201, response: wire.Context{},
			codes: []wire.Code{
				wire.CodeInvalidID, wire.CodeContextExists, wire.CodeUnknownLanguage, wire.CodeLanguageNotAvailable,
				wire.CodeLanguageStatelessOnly, wire.CodeInterpreterFailed,
			},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/contexts/{cid}/restart", name: "restartContext",
			summary: "Restart a code context: a fresh interpreter with the same id, language, cwd and env",
			handler: s.proxy, scope: auth.ScopeExec,
			status: 200, response: wire.Context{},
			codes: []wire.Code{wire.CodeInterpreterFailed},
		},
		{
			method: "DELETE", pattern: "/v1/sandboxes/{id}/contexts/{cid}", name: "deleteContext",
			summary: "End a code context",
			handler: s.proxy, scope: auth.ScopeExec,
			status: 204,
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/contexts/{cid}/run", name: "runCodeInContext",
			summary: "Run code in a context; with stream=true the answer is NDJSON RunEvents",
			handler: s.runCode, scope: auth.ScopeExec,
			query: []param{
				{"stream", "boolean", "stream events as NDJSON"},
			},
			body:   wire.RunCodeRequest{Code: "import math\nmath.sqrt(2)", TimeoutSeconds: 60},
			status: 200, response: wire.RunResult{}, events: wire.RunEvent{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/run", name: "runCode",
			summary: "Run code once in a fresh interpreter (stateless); with stream=true the answer is NDJSON " +
				"RunEvents",
			handler: s.runCode, scope: auth.ScopeExec,
			query: []param{
				{"stream", "boolean", "stream events as NDJSON"},
			},
			body:   wire.RunRequest{Language: "python", Code: "print(sum(range(10)))"},
			status: 200, response: wire.RunResult{}, events: wire.RunEvent{},
			codes: []wire.Code{
				wire.CodeInvalidRun, wire.CodeUnknownLanguage, wire.CodeLanguageNotAvailable, wire.CodeInterpreterFailed,
				wire.CodeInvalidTimeout,
			},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/git/clone", name: "gitClone",
			summary: "Clone a repository (https, http or file URL) into an absent or empty directory; " +
				"username/token authenticate over HTTP(S) and are stored in the sandbox only with " +
				"storeCredentials",
			handler: s.git, scope: auth.ScopeExec,
			body:   wire.GitCloneRequest{URL: "https://github.com/octocat/Hello-World.git", Path: "hello", Depth: 1},
			status: 200, response: wire.GitStatus{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/git/status", name: "gitStatus",
			summary: "A repository's branch, HEAD and changed, staged and untracked files",
			handler: s.git, scope: auth.ScopeExec,
			body:   wire.GitRepoRequest{Path: "hello"},
			status: 200, response: wire.GitStatus{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/git/branches", name: "gitBranches",
			summary: "A repository's local and remote branches and the current one",
			handler: s.git, scope: auth.ScopeExec,
			body:   wire.GitRepoRequest{Path: "hello"},
			status: 200, response: wire.GitBranches{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/git/checkout", name: "gitCheckout",
			summary: "Switch to a branch (create: make it at HEAD; a branch only origin has is made from it); " +
				"uncommitted changes refuse it (409 GIT_CONFLICT) unless force",
			handler: s.git, scope: auth.ScopeExec,
			body:   wire.GitCheckoutRequest{Path: "hello", Branch: "feature", Create: true},
			status: 200, response: wire.GitStatus{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/git/add", name: "gitAdd",
			summary: "Stage files (\".\" stages every change, removals too)",
			handler: s.git, scope: auth.ScopeExec,
			body:   wire.GitAddRequest{Path: "hello", Files: []string{"."}},
			status: 200, response: wire.GitStatus{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/git/commit", name: "gitCommit",
			summary: "Commit what is staged (all: tracked changes too); the author defaults to the git config's " +
				"user.name and user.email",
			handler: s.git, scope: auth.ScopeExec,
			body: wire.GitCommitRequest{
				Path: "hello", Message: "Add the greeting", AuthorName: "Ada", AuthorEmail: "ada@example.com",
			},
			status: 200, response: wire.GitCommit{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/git/push", name: "gitPush",
			summary: "Push a branch (default the current one) to a remote (default origin); 400 GIT_AUTH_FAILED " +
				"when the server refuses the credentials, 409 GIT_CONFLICT when it is not a fast-forward",
			handler: s.git, scope: auth.ScopeExec,
			body:   wire.GitSyncRequest{Path: "hello", Branch: "feature", Token: "ghp_…"},
			status: 200, response: wire.GitSyncResult{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/git/pull", name: "gitPull",
			summary: "Fetch a branch and fast-forward the current one to it (409 GIT_CONFLICT when that needs a " +
				"merge)",
			handler: s.git, scope: auth.ScopeExec,
			body:   wire.GitSyncRequest{Path: "hello", Branch: "feature", Token: "ghp_…"},
			status: 200, response: wire.GitSyncResult{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/git/log", name: "gitLog",
			summary: "Commits reachable from HEAD, newest first",
			handler: s.git, scope: auth.ScopeExec,
			body:   wire.GitLogRequest{Path: "hello", Limit: 10},
			status: 200, response: []wire.GitCommit{},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/stats", name: "getSandboxStats",
			summary: "What a sandbox uses now: CPU, memory, pids, disk, network; a sandbox without an instance " +
				"reads as zeros (never starts it, no activity)",
			handler: s.sandboxStats, scope: auth.ScopeSandboxesRead, passive: true,
			status: 200, response: wire.SandboxStats{},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/network", name: "getNetwork",
			summary: "Get a sandbox's network: mode, address, gateway, egress policy",
			handler: s.getNetwork, scope: auth.ScopeSandboxesRead, passive: true,
			status: 200, response: wire.NetworkInfo{},
		},
		{
			method: "PUT", pattern: "/v1/sandboxes/{id}/egress", name: "setEgress",
			summary: "Replace a bridge sandbox's egress policy; a running sandbox gets it at once",
			handler: s.setEgress, scope: auth.ScopeSandboxesWrite,
			body:   wire.EgressPolicy{Mode: wire.EgressAllowList, Domains: []string{"pypi.org", "*.pythonhosted.org"}},
			status: 200, response: wire.NetworkInfo{},
			codes: []wire.Code{
				wire.CodeInvalidEgress, wire.CodeNoNetwork, wire.CodeInvalidHTTPRule, wire.CodeUnknownSecret,
			},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/egress/log", name: "getEgressLog",
			summary: "A sandbox's HTTP egress log (requests its http rules saw: method, host, path, status, " +
				"bytes, duration, rule); with follow=true an NDJSON stream of EgressLogEntries, the kept " +
				"ones first",
			handler: s.egressLog, scope: auth.ScopeSandboxesRead, passive: true,
			query: []param{
				{"follow", "boolean", "stream entries as NDJSON as they happen"},
			},
			status: 200, response: []wire.EgressLogEntry{}, events: wire.EgressLogEntry{},
			codes: []wire.Code{wire.CodeNetworkUnavailable},
		},
		{
			method: "POST", pattern: "/v1/secrets", name: "createSecret",
			summary: "Create or replace a secret of the caller's team: a value the HTTP egress proxy adds to " +
				"sandboxes' requests (inject rules) that no sandbox sees; stored encrypted, never returned",
			handler: s.createSecret, scope: auth.ScopeSandboxesWrite,
			body: wire.CreateSecretRequest{
				Name: "openai", Value: "sk-…", SecretHosts: wire.SecretHosts{Hosts: []string{"api.openai.com"}},
			},
			status: 201, response: wire.SecretInfo{},
			codes: []wire.Code{wire.CodeInvalidSecret, wire.CodeNetworkUnavailable},
		},
		{
			method: "GET", pattern: "/v1/secrets", name: "listSecrets",
			summary: "List the team's secrets: names and metadata, never values",
			handler: s.listSecrets, scope: auth.ScopeSandboxesRead,
			status: 200, response: []wire.SecretInfo{},
			codes: []wire.Code{wire.CodeNetworkUnavailable},
		},
		{
			method: "PUT", pattern: "/v1/secrets/{name}/hosts", name: "setSecretHosts",
			summary: "Replace where a secret of the team may be sent (its hosts, and whether plain HTTP is " +
				"allowed); a secret made before hosts existed is injected nowhere until they are set",
			handler: s.setSecretHosts, scope: auth.ScopeSandboxesWrite,
			body:   wire.SecretHosts{Hosts: []string{"api.openai.com", "*.openai.azure.com"}},
			status: 200, response: wire.SecretInfo{},
			codes: []wire.Code{wire.CodeInvalidSecret, wire.CodeSecretNotFound, wire.CodeNetworkUnavailable},
		},
		{
			method: "DELETE", pattern: "/v1/secrets/{name}", name: "deleteSecret",
			summary: "Delete a secret of the team; requests of rules that inject it then fail with 502",
			handler: s.deleteSecret, scope: auth.ScopeSandboxesWrite,
			status: 204,
			codes:  []wire.Code{wire.CodeSecretNotFound, wire.CodeNetworkUnavailable},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/ports", name: "exposePort",
			summary: "Expose a port through the preview proxy (201; 200 when it was already exposed)",
			handler: s.exposePort, scope: auth.ScopeSandboxesWrite,
			body:   wire.ExposePortRequest{Port: 8000},
			status: 201, otherStatus: 200, response: wire.Port{},
			codes: []wire.Code{wire.CodeInvalidPort, wire.CodeNoNetwork, wire.CodeNetworkUnavailable},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/ports", name: "listPorts",
			summary: "List exposed ports",
			handler: s.listPorts, scope: auth.ScopeSandboxesRead, passive: true,
			status: 200, response: []wire.Port{},
			codes: []wire.Code{wire.CodeNetworkUnavailable},
		},
		{
			method: "DELETE", pattern: "/v1/sandboxes/{id}/ports/{port}", name: "unexposePort",
			summary: "Unexpose a port; its token stops working",
			handler: s.unexposePort, scope: auth.ScopeSandboxesWrite,
			status: 204,
			codes:  []wire.Code{wire.CodeInvalidPort, wire.CodePortNotFound, wire.CodeNetworkUnavailable},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/signed-urls", name: "signPreviewURL",
			summary: "Make a preview URL of an exposed port that works without key or token until it expires",
			handler: s.signURL, scope: auth.ScopeSandboxesWrite,
			body:   wire.SignPortRequest{Port: 8000, ExpiresInSeconds: 600},
			status: 201, response: wire.SignedURL{},
			codes: []wire.Code{
				wire.CodeInvalidPort, wire.CodePortNotFound, wire.CodeInvalidExpiry, wire.CodeNetworkUnavailable,
			},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/ports/{port}/{path...}", name: "previewGet",
			summary: previewDoc,
			handler: s.previewPath, public: true, onlyRunning: true,
			query:  previewQ,
			status: 200, response: rawBody{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/ports/{port}/{path...}", name: "previewPost",
			summary: previewDoc,
			handler: s.previewPath, public: true,
			query:  previewQ,
			status: 200, response: rawBody{},
		},
		{
			method: "PUT", pattern: "/v1/sandboxes/{id}/ports/{port}/{path...}", name: "previewPut",
			summary: previewDoc,
			handler: s.previewPath, public: true,
			query:  previewQ,
			status: 200, response: rawBody{},
		},
		{
			method: "PATCH", pattern: "/v1/sandboxes/{id}/ports/{port}/{path...}", name: "previewPatch",
			summary: previewDoc,
			handler: s.previewPath, public: true,
			query:  previewQ,
			status: 200, response: rawBody{},
		},
		{
			method: "DELETE", pattern: "/v1/sandboxes/{id}/ports/{port}/{path...}", name: "previewDelete",
			summary: previewDoc,
			handler: s.previewPath, public: true,
			query:  previewQ,
			status: 200, response: rawBody{},
		},

		// Pause/resume, snapshots, forks, lineage (snapshots.go).
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/pause", name: "pauseSandbox",
			summary: "Pause a started sandbox: class gvisor saves every process and its memory to disk and frees " +
				"CPU and RAM; class container freezes the processes",
			handler: s.pauseSandbox, scope: auth.ScopeSandboxesWrite, passive: true,
			status: 200, response: wire.Sandbox{},
			codes: []wire.Code{wire.CodeSandboxNotStarted, wire.CodePauseUnsupported, wire.CodeCheckpointRefused},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/resume", name: "resumeSandbox",
			summary: "Resume a paused sandbox: every process goes on where it was",
			handler: s.resumeSandbox, scope: auth.ScopeSandboxesWrite, passive: true,
			status: 200, response: wire.Sandbox{},
			codes: []wire.Code{wire.CodeSandboxNotPaused, wire.CodeMemoryImageGone},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/snapshots", name: "createSnapshot",
			summary: "Save a sandbox as a named snapshot: its filesystem as a layer, with includeMemory (class " +
				"gvisor) its running processes too",
			handler: s.createSnapshot, scope: auth.ScopeSandboxesWrite, passive: true,
			body:   wire.CreateSnapshotRequest{Name: "after-setup", ExpiresInSeconds: 604800},
			status: 201, response: wire.Snapshot{},
			codes: []wire.Code{
				wire.CodeInvalidSnapshotName, wire.CodeSnapshotExists, wire.CodeMemoryUnsupported,
				wire.CodeCheckpointRefused,
			},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/fork", name: "forkSandbox",
			summary: "Make count independent copies of a sandbox: filesystem, and for class gvisor its running " +
				"processes",
			handler: s.forkSandbox, scope: auth.ScopeSandboxesWrite, passive: true,
			body:   wire.ForkRequest{Name: "try", Count: 3},
			status: 201, response: wire.ForkResult{},
			codes: []wire.Code{wire.CodeInvalidCount, wire.CodeMemoryUnsupported, wire.CodeCheckpointRefused},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/forks", name: "listForks",
			summary: "The sandboxes forked from a sandbox",
			handler: s.listForks, scope: auth.ScopeSandboxesRead, passive: true,
			status: 200, response: []wire.Sandbox{},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/parent", name: "getParent",
			summary: "The sandbox a fork was made from (404 NO_PARENT if it is no fork)",
			handler: s.getParent, scope: auth.ScopeSandboxesRead, passive: true,
			status: 200, response: wire.Sandbox{},
			codes: []wire.Code{wire.CodeNoParent, wire.CodeParentGone},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/ancestors", name: "listAncestors",
			summary: "A fork's parent, its parent and so on, nearest first",
			handler: s.listAncestors, scope: auth.ScopeSandboxesRead, passive: true,
			status: 200, response: []wire.Sandbox{},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/ssh-access", name: "createSSHAccess",
			summary: "Create an SSH access token (the SSH user name; shown only in this answer, with a " +
				"ready-to-paste ssh command), or with publicKey register a key that logs in as the sandbox's " +
				"id; 503 SSH_DISABLED without --ssh-listen",
			handler: s.createSSHAccess, scope: auth.ScopeExec, passive: true,
			body:   wire.CreateSSHAccessRequest{ExpiresInSeconds: 3600},
			status: 201, response: wire.SSHAccess{},
			codes: []wire.Code{wire.CodeSSHDisabled, wire.CodeInvalidExpiry, wire.CodeInvalidKey},
		},
		{
			method: "GET", pattern: "/v1/sandboxes/{id}/ssh-access", name: "listSSHAccess",
			summary: "List a sandbox's SSH access tokens and keys (without the tokens); empty without --ssh-listen",
			handler: s.listSSHAccess, scope: auth.ScopeExec, passive: true,
			status: 200, response: []wire.SSHAccess{},
		},
		{
			method: "DELETE", pattern: "/v1/sandboxes/{id}/ssh-access/{access}", name: "revokeSSHAccess",
			summary: "Revoke an SSH access token or key; connections it opened are closed",
			handler: s.revokeSSHAccess, scope: auth.ScopeExec, passive: true,
			status: 204,
			codes:  []wire.Code{wire.CodeSSHDisabled, wire.CodeSSHAccessNotFound},
		},
		{
			method: "GET", pattern: "/v1/snapshots", name: "listSnapshots",
			summary: "List snapshots",
			handler: s.listSnapshots, scope: auth.ScopeSandboxesRead,
			status: 200, response: []wire.Snapshot{},
		},
		{
			method: "GET", pattern: "/v1/snapshots/{name}", name: "getSnapshot",
			summary: "Get a snapshot",
			handler: s.getSnapshot, scope: auth.ScopeSandboxesRead,
			status: 200, response: wire.Snapshot{},
			codes: []wire.Code{wire.CodeSnapshotNotFound},
		},
		{
			method: "DELETE", pattern: "/v1/snapshots/{name}", name: "deleteSnapshot",
			summary: "Delete a snapshot; sandboxes made from it keep working",
			handler: s.deleteSnapshot, scope: auth.ScopeSandboxesWrite,
			status: 204,
			codes:  []wire.Code{wire.CodeSnapshotNotFound},
		},
		{
			method: "POST", pattern: "/v1/volumes", name: "createVolume",
			summary: "Create a volume: an ext4 filesystem of sizeMiB (default 1024) that sandboxes mount at " +
				"create with volumes: [{name, path, readOnly}]; writes past the size fail with ENOSPC",
			handler: s.createVolume, scope: auth.ScopeSandboxesWrite,
			body:   wire.CreateVolumeRequest{Name: "cache", SizeMiB: 4096},
			status: 201, response: wire.Volume{},
			codes: []wire.Code{wire.CodeInvalidVolume, wire.CodeVolumeExists, wire.CodeNoSpace},
		},
		{
			method: "GET", pattern: "/v1/volumes", name: "listVolumes",
			summary: "List volumes with their use and the sandboxes that mount them",
			handler: s.listVolumes, scope: auth.ScopeSandboxesRead,
			status: 200, response: []wire.Volume{},
			codes: []wire.Code{wire.CodeInvalidVolume},
		},
		{
			method: "GET", pattern: "/v1/volumes/{name}", name: "getVolume",
			summary: "Get a volume",
			handler: s.getVolume, scope: auth.ScopeSandboxesRead,
			status: 200, response: wire.Volume{},
			codes: []wire.Code{wire.CodeInvalidVolume, wire.CodeVolumeNotFound},
		},
		{
			method: "DELETE", pattern: "/v1/volumes/{name}", name: "deleteVolume",
			summary: "Delete a volume and its files; 409 VOLUME_IN_USE while a sandbox (in any state) mounts it, " +
				"unless force=true",
			handler: s.deleteVolume, scope: auth.ScopeSandboxesWrite,
			query: []param{
				{"force", "boolean", "delete even if sandboxes mount it (they then fail to start)"},
			},
			status: 204,
			codes:  []wire.Code{wire.CodeInvalidVolume, wire.CodeVolumeNotFound, wire.CodeVolumeInUse},
		},
		{
			method: "POST", pattern: "/v1/pools", name: "createPool",
			summary: "Create a warm pool: min (up to max) started instances of a template, kept ready; a create " +
				"whose spec matches the template, or that names the pool, takes one in milliseconds and gets " +
				"its own name, labels, env, egress and lifecycle policy. Pool instances count against the " +
				"team's quotas",
			handler: s.createPool, scope: auth.ScopeSandboxesWrite,
			body: wire.CreatePoolRequest{
				Name: "python", Template: wire.PoolTemplate{Image: "python", MemoryMiB: 2048}, Min: 2, Max: 10,
			},
			status: 201, response: wire.Pool{},
			codes: append([]wire.Code{wire.CodeInvalidPool, wire.CodePoolExists}, codesCreate...),
		},
		{
			method: "GET", pattern: "/v1/pools", name: "listPools",
			summary: "List the team's warm pools with how many instances are ready",
			handler: s.listPools, scope: auth.ScopeSandboxesRead,
			status: 200, response: []wire.Pool{},
			codes: []wire.Code{wire.CodeInvalidPool},
		},
		{
			method: "GET", pattern: "/v1/pools/{name}", name: "getPool",
			summary: "Get a warm pool",
			handler: s.getPool, scope: auth.ScopeSandboxesRead,
			status: 200, response: wire.Pool{},
			codes: []wire.Code{wire.CodeInvalidPool, wire.CodePoolNotFound},
		},
		{
			method: "PATCH", pattern: "/v1/pools/{name}", name: "updatePool",
			summary: "Resize a warm pool (min, max); ready instances past the new max are deleted",
			handler: s.updatePool, scope: auth.ScopeSandboxesWrite,
			body:   wire.UpdatePoolRequest{Min: new(4), Max: new(20)},
			status: 200, response: wire.Pool{},
			codes: []wire.Code{wire.CodeInvalidPool, wire.CodePoolNotFound},
		},
		{
			method: "DELETE", pattern: "/v1/pools/{name}", name: "deletePool",
			summary: "Delete a warm pool and the instances waiting in it; sandboxes adopted from it stay",
			handler: s.deletePool, scope: auth.ScopeSandboxesWrite,
			status: 204,
			codes:  []wire.Code{wire.CodeInvalidPool, wire.CodePoolNotFound},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/buckets", name: "mountBucket",
			summary: "Mount an S3 bucket (or prefix) into a running sandbox of class container at path, like a " +
				"create's buckets entry; the keys stay on the host. Lasts until the sandbox stops; 409 " +
				"LIVE_MOUNT_UNSUPPORTED for class gvisor, 409 BUCKET_MOUNT_EXISTS for a taken path",
			handler: s.mountBucket, scope: auth.ScopeSandboxesWrite,
			body: wire.BucketMount{
				Bucket: "datasets", Prefix: "2026/", Path: "/data", ReadOnly: true, Endpoint: "https://s3.example.com",
				AccessKeyID: "AKIA…", SecretAccessKey: "…",
			},
			status: 201, response: wire.BucketMount{},
			codes: []wire.Code{
				wire.CodeLiveMountUnsupported, wire.CodeInvalidBucketMount, wire.CodeInvalidVolume,
				wire.CodeBucketMountExists, wire.CodeSandboxNotStarted,
			},
		},
		{
			method: "DELETE", pattern: "/v1/sandboxes/{id}/buckets", name: "unmountBucket",
			summary: "Unmount a bucket mounted into the running sandbox at path (404 BUCKET_MOUNT_NOT_FOUND for " +
				"mounts given at create, which stay)",
			handler: s.unmountBucket, scope: auth.ScopeSandboxesWrite, passive: true,
			query: []param{
				{"path", "string", "the mount's path in the sandbox (required)"},
			},
			status: 204,
			codes:  []wire.Code{wire.CodeLiveMountUnsupported, wire.CodeInvalidBucketMount, wire.CodeBucketMountNotFound},
		},
		{
			method: "POST", pattern: "/v1/sandboxes/{id}/backups", name: "createBackup",
			summary: "Back up a directory of the sandbox (owners, modes, xattrs, hard links) as tar+zstd into the " +
				"blob store (local or S3); expiresInSeconds deletes it after that long",
			handler: s.createBackup, scope: auth.ScopeExec,
			body:   wire.CreateBackupRequest{Path: "/workspace", Name: "before-upgrade", ExpiresInSeconds: 86400},
			status: 201, response: wire.Backup{},
			codes: []wire.Code{
				wire.CodeArchiveUnavailable, wire.CodeInvalidBackup, wire.CodeInvalidPath, wire.CodePathNotFound,
				wire.CodeBlobStoreUnavailable,
			},
		},
		{
			method: "GET", pattern: "/v1/backups", name: "listBackups",
			summary: "List backups that have not expired, oldest first",
			handler: s.listBackups, scope: auth.ScopeSandboxesRead,
			query: []param{
				{"sandbox", "string", "only backups of this sandbox (id or name)"},
			},
			status: 200, response: []wire.Backup{},
			codes: []wire.Code{wire.CodeArchiveUnavailable},
		},
		{
			method: "GET", pattern: "/v1/backups/{backup}", name: "getBackup",
			summary: "Get a backup",
			handler: s.getBackup, scope: auth.ScopeSandboxesRead,
			status: 200, response: wire.Backup{},
			codes: []wire.Code{wire.CodeArchiveUnavailable, wire.CodeBackupNotFound},
		},
		{
			method: "DELETE", pattern: "/v1/backups/{backup}", name: "deleteBackup",
			summary: "Delete a backup",
			handler: s.deleteBackup, scope: auth.ScopeSandboxesWrite,
			status: 204,
			codes:  []wire.Code{wire.CodeArchiveUnavailable, wire.CodeBackupNotFound},
		},
		{
			method: "POST", pattern: "/v1/backups/{backup}/restore", name: "restoreBackup",
			summary: "Restore a backup into a sandbox (started if need be) at path (default: where it was taken), " +
				"which must be missing or empty (409 BACKUP_TARGET_NOT_EMPTY); a damaged backup is refused " +
				"(409 BACKUP_CORRUPT) and nothing is written",
			handler: s.restoreBackup, scope: auth.ScopeExec,
			body:   wire.RestoreBackupRequest{Sandbox: "web", Path: "/workspace/restored"},
			status: 200, response: wire.Backup{},
			codes: []wire.Code{
				wire.CodeArchiveUnavailable, wire.CodeBackupNotFound, wire.CodeBackupCorrupt,
				wire.CodeBackupTargetNotEmpty, wire.CodeSandboxNotFound, wire.CodeInvalidPath,
				wire.CodeBlobStoreUnavailable,
			},
		},
		{
			method: "GET", pattern: "/v1/images", name: "listImages",
			summary: "List images",
			handler: s.listImages, scope: auth.ScopeSandboxesRead,
			status: 200, response: []wire.Image{},
		},
		{
			method: "POST", pattern: "/v1/images/import", name: "importImage",
			summary: "Import an image from a tar stream: a rootfs tree, an OCI image layout or a docker-save " +
				"tarball (plain, gzip or zstd)",
			handler: s.importImage, scope: auth.ScopeImages,
			query: []param{
				{"name", "string", "name of the new image"},
			},
			body:   rawBody{},
			status: 201, response: wire.Image{},
			codes: []wire.Code{wire.CodeInvalidImageName, wire.CodeInvalidImage, wire.CodeNameTaken},
		},
		{
			method: "POST", pattern: "/v1/images/pull", name: "pullImage",
			summary: "Pull an image from an OCI registry",
			handler: s.pullImage, scope: auth.ScopeImages,
			body:   wire.PullRequest{Ref: "python:3.12-slim", Name: "python"},
			status: 201, response: wire.Image{},
			codes: []wire.Code{wire.CodeInvalidImageRef, wire.CodeImageNotFound, wire.CodeRegistryUnavailable},
		},
		{
			method: "POST", pattern: "/v1/images/build", name: "buildImage",
			summary: "Build an image from a Dockerfile in a build context (a tar stream, plain or gzip): FROM (an " +
				"image sbx has, else pulled from its registry with \"pull\" events), RUN (in a build sandbox " +
				"with the default egress policy and limits), COPY/ADD from the context, ENV, ARG, WORKDIR, " +
				"USER, ENTRYPOINT, CMD (the main process of sandboxes created from the image without an " +
				"entrypoint of their own), LABEL; each RUN/COPY/ADD a cached layer. The answer streams " +
				"NDJSON BuildEvents ending with \"done\" or \"error\"; a bad or unsupported Dockerfile is a " +
				"400 naming the line",
			handler: s.buildImage, scope: auth.ScopeImages,
			query: []param{
				{"name", "string", "the image to make (replaced if it exists)"},
				{"dockerfile", "string", "path of the Dockerfile in the context (default Dockerfile)"},
				{"buildArg", "string", "NAME=VALUE for an ARG; repeat for several"},
				{"noCache", "boolean", "run every step even when the cache has it"},
				{"timeoutSeconds", "integer", "the whole build (default 1800)"},
			},
			body:   rawBody{},
			status: 200, response: ndjson{}, events: wire.BuildEvent{},
			codes: append([]wire.Code{wire.CodeBodyTooLarge, wire.CodeTarInvalid}, codesBuild...), // build.go
		},
		{
			method: "POST", pattern: "/v1/images/build/steps", name: "buildImageFromSteps",
			summary: "Build an image from the JSON form of the steps (from, then " +
				"run/copy/env/workdir/user/entrypoint/cmd/labels, files as the context); progress as for " +
				"/v1/images/build",
			handler: s.buildSteps, scope: auth.ScopeImages,
			body: wire.BuildRequest{
				Name: "app", From: "python",
				Steps: []wire.BuildStep{
					{Copy: &wire.BuildCopy{Src: []string{"requirements.txt"}, Dest: "/app/"}},
					{Run: "pip install -r /app/requirements.txt"},
					{Workdir: "/app", Cmd: []string{"python3", "main.py"}},
				},
				Files: map[string][]byte{"requirements.txt": []byte("requests\n")},
			},
			status: 200, response: ndjson{}, events: wire.BuildEvent{},
			codes: codesBuild,
		},
		{
			method: "GET", pattern: "/v1/images/{name...}", name: "getImage",
			summary: "Get an image",
			handler: s.getImage, scope: auth.ScopeSandboxesRead,
			status: 200, response: wire.Image{},
			codes: []wire.Code{wire.CodeImageNotFound},
		},
		{
			method: "DELETE", pattern: "/v1/images/{name...}", name: "deleteImage",
			summary: "Delete an image (409 while a sandbox uses it)",
			handler: s.deleteImage, scope: auth.ScopeImages,
			status: 204,
			codes:  []wire.Code{wire.CodeImageNotFound, wire.CodeImageInUse},
		},

		// API keys, teams, quotas and the audit log (auth_routes.go). An admin
		// key of team default administers all teams; of another team, its own.
		{
			method: "POST", pattern: "/v1/keys", name: "createKey",
			summary: "Create an API key; the answer holds its secret, shown only this once",
			handler: s.createKey, scope: auth.ScopeAdmin,
			body:   wire.CreateKeyRequest{Name: "ci", Scopes: []string{"sandboxes:write", "exec"}, TTLSeconds: 2592000},
			status: 201, response: wire.CreatedKey{},
		},
		{
			method: "GET", pattern: "/v1/keys", name: "listKeys",
			summary: "List API keys (never their secrets)",
			handler: s.listKeys, scope: auth.ScopeAdmin,
			query: []param{
				{"team", "string", "only this team's keys (root admin only)"},
			},
			status: 200, response: []wire.APIKey{},
		},
		{
			method: "DELETE", pattern: "/v1/keys/{key}", name: "revokeKey",
			summary: "Revoke an API key; it is refused from the next request on",
			handler: s.revokeKey, scope: auth.ScopeAdmin,
			status: 200, response: wire.APIKey{},
		},
		{
			method: "POST", pattern: "/v1/teams", name: "createTeam",
			summary: "Create a team (Daytona: organization, E2B: team) with its quotas",
			handler: s.createTeam, scope: auth.ScopeAdmin,
			body: wire.CreateTeamRequest{
				ID: "acme", Quotas: wire.Quotas{MaxSandboxes: 50, MaxRunning: 10, MemoryMiB: 32768},
			},
			status: 201, response: wire.Team{},
		},
		{
			method: "GET", pattern: "/v1/teams", name: "listTeams",
			summary: "List teams",
			handler: s.listTeams, scope: auth.ScopeAdmin,
			status: 200, response: []wire.Team{},
		},
		{
			method: "GET", pattern: "/v1/teams/{team}", name: "getTeam",
			summary: "Get a team: the key's own, or any with the root admin key",
			handler: s.getTeam, scope: auth.ScopeTeamRead,
			status: 200, response: wire.Team{},
		},
		{
			method: "PUT", pattern: "/v1/teams/{team}/quotas", name: "setTeamQuotas",
			summary: "Replace a team's quotas (0: no limit)",
			handler: s.setQuotas, scope: auth.ScopeAdmin,
			body:   wire.Quotas{MaxSandboxes: 100, MaxRunning: 20, CPU: 32, MemoryMiB: 65536},
			status: 200, response: wire.Team{},
		},
		{
			method: "DELETE", pattern: "/v1/teams/{team}", name: "deleteTeam",
			summary: "Delete a team that owns no sandboxes, snapshots or live keys (409 TEAM_NOT_EMPTY)",
			handler: s.deleteTeam, scope: auth.ScopeAdmin,
			status: 204,
		},
		{
			method: "PUT", pattern: "/v1/teams/{team}/webhook", name: "setTeamWebhook",
			summary: "Send a team's events (as the --webhook URLs get every team's, signed with secret) to url; " +
				"root admin only",
			handler: s.setTeamWebhook, scope: auth.ScopeAdmin,
			body:   wire.TeamWebhook{URL: "https://hooks.example.com/sbx", Secret: "whsec-…"},
			status: 200, response: wire.TeamWebhook{},
		},
		{
			method: "DELETE", pattern: "/v1/teams/{team}/webhook", name: "deleteTeamWebhook",
			summary: "Stop sending a team's events to its webhook",
			handler: s.deleteTeamWebhook, scope: auth.ScopeAdmin,
			status: 204,
		},
		{
			method: "GET", pattern: "/v1/teams/{team}/usage", name: "getTeamUsage",
			summary: "What a team holds now against its quotas",
			handler: s.teamUsage, scope: auth.ScopeTeamRead,
			status: 200, response: wire.TeamUsage{},
		},
		{
			method: "GET", pattern: "/v1/audit", name: "listAudit",
			summary: "The audit log: every mutating request (key, team, method, path, status, code, time), oldest " +
				"first",
			handler: s.listAudit, scope: auth.ScopeAdmin,
			query: []param{
				{"after", "integer", "only entries with a higher seq"},
				{"limit", "integer", "at most this many (default 1000)"},
				{"team", "string", "only this team's (root admin only)"},
			},
			status: 200, response: []wire.AuditEntry{},
		},
	}
}
