package api

import (
	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/sdk"
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
	onlyRunning     bool       // reads files or servers of a running instance: never starts it, 409 naming the state otherwise (lookup.go)
	query           []param    // query parameters
	body            any        // request body type for the document; rawBody for bytes
	status          int        // success status
	response        any        // response type; nil for none, rawBody for bytes, ndjson for a stream

	// For the OpenAPI document (openapi*.go); TestRoutesHaveDocMetadata
	// names any row missing what it needs.
	name        string // operationId, lowerCamelCase verb first: "createSandbox"
	tag         string // group; default from the path (tagOf)
	events      any    // the NDJSON line type when it streams (ndjson response, stream=true or follow=true)
	frames      any    // WebSocket (status 101): the JSON type of its text frames
	otherStatus int    // a second success status (PUT ensure: 201 created; ports: 200 existed)
}

// param is a query parameter; typ is "string", "integer", "number",
// "boolean", "[]string" (repeatable) or "state" (a sandbox State).
type param struct{ name, typ, doc string }

type (
	rawBody struct{}
	ndjson  struct{}
)

func (s *Server) routes() []route {
	sandboxQ := []param{{"state", "state", "only sandboxes in this state"}, {"label", "[]string", "k=v; repeat to require several labels"}}
	eventsQ := []param{{"after", "integer", "only events with a higher seq"}, {"limit", "integer", "at most this many (default 1000)"}, {"follow", "boolean", "stream events as NDJSON as they happen"}}
	pathQ := param{"path", "string", "path inside the sandbox; relative paths start at the workdir"}
	return []route{
		{method: "GET", pattern: "/healthz", summary: "Daemon liveness", handler: s.health, public: true, status: 200, response: map[string]bool{}, name: "getHealth"},
		{method: "GET", pattern: "/v1/openapi.json", scope: auth.ScopeSandboxesRead, summary: "This document (OpenAPI 3.1); needs no key", handler: s.openapi, public: true, status: 200, response: map[string]any{}, name: "getOpenAPIDocument"},
		{method: "GET", pattern: "/metrics", scope: auth.ScopeMetricsRead, summary: "Prometheus metrics (text format); needs the admin key or the metrics key (--metrics-token)", handler: s.serveMetrics, public: true, status: 200, response: rawBody{}, name: "getMetrics"},

		{method: "POST", pattern: "/v1/sandboxes", scope: auth.ScopeSandboxesWrite, summary: "Create and start a sandbox", handler: s.createSandbox, body: sdk.CreateSandboxRequest{}, status: 201, response: sdk.Sandbox{}, name: "createSandbox"},
		{method: "GET", pattern: "/v1/sandboxes", scope: auth.ScopeSandboxesRead, summary: "List sandboxes", handler: s.listSandboxes, query: sandboxQ, status: 200, response: []sdk.Sandbox{}, name: "listSandboxes"},
		{method: "GET", pattern: "/v1/sandboxes/{id}", scope: auth.ScopeSandboxesRead, summary: "Get a sandbox by id or name", handler: s.getSandbox, status: 200, response: sdk.Sandbox{}, name: "getSandbox"},
		{method: "PUT", pattern: "/v1/sandboxes/{id}", scope: auth.ScopeSandboxesWrite, summary: "Get or create the sandbox with this name (201 when created, 200 when it existed)", handler: s.ensureSandbox, body: sdk.CreateSandboxRequest{}, status: 200, response: sdk.Sandbox{}, name: "ensureSandbox", otherStatus: 201},
		{method: "DELETE", pattern: "/v1/sandboxes/{id}", scope: auth.ScopeSandboxesWrite, summary: "Delete a sandbox (202, or 204 with wait=true once it is gone); 409 SANDBOX_HAS_FORKS while it has forks, unless cascade=true", handler: s.deleteSandbox, query: []param{{"wait", "boolean", "block until everything is removed"}, {"cascade", "boolean", "delete its forks, their forks and so on first"}}, status: 202, response: sdk.Sandbox{}, name: "deleteSandbox", otherStatus: 204},
		{method: "POST", pattern: "/v1/sandboxes/{id}/start", scope: auth.ScopeSandboxesWrite, summary: "Start a stopped sandbox", handler: s.startSandbox, status: 200, response: sdk.Sandbox{}, name: "startSandbox"},
		{method: "PATCH", pattern: "/v1/sandboxes/{id}", scope: auth.ScopeSandboxesWrite, summary: "Change a sandbox's lifecycle policy, environment, limits or labels (fields left out keep their value; env: a value sets a variable, null unsets it, for every process started from now on; cpu, memoryMiB, pidsLimit apply at once to a running class-container instance; labels replace all labels)", handler: s.updateSandbox, body: sdk.UpdateSandboxRequest{}, status: 200, response: sdk.Sandbox{}, name: "updateSandbox"},
		{method: "POST", pattern: "/v1/sandboxes/{id}/archive", scope: auth.ScopeSandboxesWrite, summary: "Archive a stopped sandbox's files into the blob store; the next start restores them", handler: s.archiveSandbox, passive: true, status: 200, response: sdk.Sandbox{}, name: "archiveSandbox"},
		{method: "POST", pattern: "/v1/sandboxes/{id}/wait", scope: auth.ScopeSandboxesRead, summary: "Wait until a sandbox is in a state; 503 WAIT_TIMEOUT if it is not within timeoutSeconds", handler: s.waitSandbox, passive: true, query: []param{{"state", "state", "the state to wait for: started, stopped, archived, deleted, …"}, {"timeoutSeconds", "integer", "how long to wait (default 60, at most 3600)"}}, status: 200, response: sdk.Sandbox{}, name: "waitSandbox"},
		{method: "GET", pattern: "/v1/sandboxes/{id}/events", scope: auth.ScopeSandboxesRead, summary: "A sandbox's state changes with reasons; with follow=true an NDJSON stream of EventLines", handler: s.sandboxEvents, passive: true, query: eventsQ, status: 200, response: []sdk.Event{}, name: "listSandboxEvents", events: sdk.EventLine{}},
		{method: "GET", pattern: "/v1/events", scope: auth.ScopeSandboxesRead, summary: "State changes of all sandboxes, deletions included; with follow=true an NDJSON stream of EventLines", handler: s.allEvents, query: eventsQ, status: 200, response: []sdk.Event{}, name: "listEvents", events: sdk.EventLine{}},
		{method: "GET", pattern: "/v1/sandboxes/{id}/logs", scope: auth.ScopeSandboxesRead, summary: "Output of the main process (entrypoint) as NDJSON LogLines; with follow=true it streams until the sandbox stops and keeps it active", handler: s.mainLogs, passive: true, query: []param{{"follow", "boolean", "keep streaming new output"}}, status: 200, response: ndjson{}, name: "getSandboxLogs", events: sdk.LogLine{}},
		{method: "POST", pattern: "/v1/sandboxes/{id}/stop", scope: auth.ScopeSandboxesWrite, summary: "Stop a sandbox: SIGTERM, grace period, SIGKILL", handler: s.stopSandbox, query: []param{{"graceSeconds", "integer", "seconds between SIGTERM and SIGKILL (default 10)"}, {"force", "boolean", "SIGKILL at once"}}, status: 200, response: sdk.Sandbox{}, name: "stopSandbox"},

		{method: "POST", pattern: "/v1/sandboxes/{id}/exec", scope: auth.ScopeExec, summary: "Run a command; with stream=true the answer is NDJSON ExecEvents", handler: s.exec, query: []param{{"stream", "boolean", "stream events as NDJSON"}}, body: sdk.ExecRequest{}, status: 200, response: sdk.ExecResult{}, name: "execCommand", events: sdk.ExecEvent{}},
		{method: "PUT", pattern: "/v1/sandboxes/{id}/files", scope: auth.ScopeExec, summary: "Upload a file (body streamed); a symlink at path is written through", handler: s.proxy, query: []param{pathQ, {"mode", "string", "octal permission bits, default 0644"}, {"parents", "boolean", "create missing parent directories (default true; false answers 404 PARENT_NOT_FOUND)"}}, body: rawBody{}, status: 200, response: sdk.FileInfo{}, name: "writeFile"},
		{method: "GET", pattern: "/v1/sandboxes/{id}/files", scope: auth.ScopeExec, summary: "Download a file (streamed)", handler: s.proxy, onlyRunning: true, query: []param{pathQ}, status: 200, response: rawBody{}, name: "readFile"},
		{method: "DELETE", pattern: "/v1/sandboxes/{id}/files", scope: auth.ScopeExec, summary: "Delete a file or directory", handler: s.proxy, query: []param{pathQ, {"recursive", "boolean", "delete a non-empty directory"}}, status: 204, name: "deleteFile"},
		{method: "GET", pattern: "/v1/sandboxes/{id}/files/list", scope: auth.ScopeExec, summary: "List a directory", handler: s.proxy, onlyRunning: true, query: []param{pathQ, {"depth", "integer", "levels to list, 1 (default) to 32; more than 50000 entries answer 400 LIST_TOO_LARGE"}}, status: 200, response: []sdk.FileInfo{}, name: "listFiles"},
		{method: "PUT", pattern: "/v1/sandboxes/{id}/files/tar", scope: auth.ScopeExec, summary: "Extract a tar stream (plain or gzip) into a directory; refused whole if an entry is absolute, climbs out with .., lies below a symlink or is a device or fifo", handler: s.proxy, query: []param{{"path", "string", "directory to extract into"}, {"parents", "boolean", "create the directory and its parents (default true)"}}, body: rawBody{}, status: 200, response: sdk.FileInfo{}, name: "uploadTar"},
		{method: "GET", pattern: "/v1/sandboxes/{id}/files/tar", scope: auth.ScopeExec, summary: "Download a directory as a tar stream (directories, files, symlinks)", handler: s.proxy, onlyRunning: true, query: []param{{"path", "string", "directory to download"}}, status: 200, response: rawBody{}, name: "downloadTar"},
		{method: "GET", pattern: "/v1/sandboxes/{id}/files/stat", scope: auth.ScopeExec, summary: "Describe a file", handler: s.proxy, onlyRunning: true, query: []param{pathQ}, status: 200, response: sdk.FileInfo{}, name: "statFile"},
		{method: "POST", pattern: "/v1/sandboxes/{id}/files/mkdir", scope: auth.ScopeExec, summary: "Create a directory", handler: s.proxy, body: sdk.MkdirRequest{}, status: 200, response: sdk.FileInfo{}, name: "makeDirectory"},
		{method: "POST", pattern: "/v1/sandboxes/{id}/files/move", scope: auth.ScopeExec, summary: "Move or rename a file", handler: s.proxy, body: sdk.MoveRequest{}, status: 200, response: sdk.FileInfo{}, name: "moveFile"},

		// Background processes, sessions, terminals and watches (interactive.go).
		{method: "POST", pattern: "/v1/sandboxes/{id}/processes", scope: auth.ScopeExec, summary: "Start a background process in its own process group; it outlives the request", handler: s.proxy, body: sdk.StartProcessRequest{}, status: 201, response: sdk.Process{}, name: "startProcess"},
		{method: "GET", pattern: "/v1/sandboxes/{id}/processes", scope: auth.ScopeExec, summary: "List background processes, running and exited", handler: s.proxy, lookup: true, status: 200, response: []sdk.Process{}, name: "listProcesses"},
		{method: "GET", pattern: "/v1/sandboxes/{id}/processes/{process}", scope: auth.ScopeExec, summary: "Get a background process: state, exit code, signal, times", handler: s.proxy, lookup: true, status: 200, response: sdk.Process{}, name: "getProcess"},
		{method: "DELETE", pattern: "/v1/sandboxes/{id}/processes/{process}", scope: auth.ScopeExec, summary: "Kill a process's group if it still runs, and forget it", handler: s.proxy, status: 204, name: "killProcess"},
		{method: "GET", pattern: "/v1/sandboxes/{id}/processes/{process}/logs", scope: auth.ScopeExec, summary: "A process's output as NDJSON ExecEvents (stdout/stderr chunks numbered by seq), ending with \"exit\" once it has exited or, without follow, \"end\"", handler: s.streamProxy, lookup: true, query: []param{{"offset", "integer", "only chunks with a higher seq (the last seq you have)"}, {"follow", "boolean", "keep streaming until the process exits"}}, status: 200, response: ndjson{}, name: "getProcessLogs", events: sdk.ExecEvent{}},
		{method: "POST", pattern: "/v1/sandboxes/{id}/processes/{process}/stdin", scope: auth.ScopeExec, summary: "Write the body to the process's stdin", handler: s.proxy, body: rawBody{}, status: 204, name: "writeProcessStdin"},
		{method: "POST", pattern: "/v1/sandboxes/{id}/processes/{process}/stdin/close", scope: auth.ScopeExec, summary: "Close the process's stdin", handler: s.proxy, status: 204, name: "closeProcessStdin"},
		{method: "POST", pattern: "/v1/sandboxes/{id}/processes/{process}/signal", scope: auth.ScopeExec, summary: "Send a signal (name or number) to the process's whole group", handler: s.proxy, body: sdk.SignalRequest{}, status: 200, response: sdk.Process{}, name: "signalProcess"},
		{method: "POST", pattern: "/v1/sandboxes/{id}/processes/{process}/wait", scope: auth.ScopeExec, summary: "Wait for the process to exit", handler: s.proxy, query: []param{{"timeoutSeconds", "number", "give up after this long with 503 WAIT_TIMEOUT (default: no limit)"}}, status: 200, response: sdk.Process{}, name: "waitProcess"},
		{method: "POST", pattern: "/v1/sandboxes/{id}/processes/{process}/wait-for-log", scope: auth.ScopeExec, summary: "Wait for an output line matching a substring or regex (409 PROCESS_EXITED if it exits first)", handler: s.proxy, body: sdk.WaitForLogRequest{}, status: 200, response: sdk.LogMatch{}, name: "waitForProcessLog"},
		{method: "POST", pattern: "/v1/sandboxes/{id}/processes/{process}/wait-for-port", scope: auth.ScopeExec, summary: "Wait for a TCP port inside the sandbox to accept connections, or to answer HTTP with a status (409 PROCESS_EXITED if it exits first)", handler: s.proxy, body: sdk.WaitForPortRequest{}, status: 200, response: sdk.PortReady{}, name: "waitForProcessPort"},

		{method: "POST", pattern: "/v1/sandboxes/{id}/sessions", scope: auth.ScopeExec, summary: "Start a persistent shell session", handler: s.proxy, body: sdk.CreateSessionRequest{}, status: 201, response: sdk.Session{}, name: "createSession"},
		{method: "GET", pattern: "/v1/sandboxes/{id}/sessions", scope: auth.ScopeExec, summary: "List sessions", handler: s.proxy, lookup: true, status: 200, response: []sdk.Session{}, name: "listSessions"},
		{method: "GET", pattern: "/v1/sandboxes/{id}/sessions/{session}", scope: auth.ScopeExec, summary: "Get a session", handler: s.proxy, lookup: true, status: 200, response: sdk.Session{}, name: "getSession"},
		{method: "DELETE", pattern: "/v1/sandboxes/{id}/sessions/{session}", scope: auth.ScopeExec, summary: "Kill a session's shell and what it started", handler: s.proxy, status: 204, name: "deleteSession"},
		{method: "POST", pattern: "/v1/sandboxes/{id}/sessions/{session}/exec", scope: auth.ScopeExec, summary: "Run a command in a session (cd and exported variables persist); with stream=true the answer is NDJSON SessionEvents", handler: s.streamProxy, query: []param{{"stream", "boolean", "stream events as NDJSON"}}, body: sdk.SessionExecRequest{}, status: 200, response: sdk.SessionExecResult{}, name: "execInSession", events: sdk.SessionEvent{}},

		{method: "POST", pattern: "/v1/sandboxes/{id}/ptys", scope: auth.ScopeExec, summary: "Start a program (default a shell) on a new terminal", handler: s.proxy, body: sdk.CreatePTYRequest{}, status: 201, response: sdk.PTY{}, name: "createPTY"},
		{method: "GET", pattern: "/v1/sandboxes/{id}/ptys", scope: auth.ScopeExec, summary: "List terminals", handler: s.proxy, lookup: true, status: 200, response: []sdk.PTY{}, name: "listPTYs"},
		{method: "GET", pattern: "/v1/sandboxes/{id}/ptys/{pty}", scope: auth.ScopeExec, summary: "Get a terminal", handler: s.proxy, lookup: true, status: 200, response: sdk.PTY{}, name: "getPTY"},
		{method: "DELETE", pattern: "/v1/sandboxes/{id}/ptys/{pty}", scope: auth.ScopeExec, summary: "Kill every process of a terminal's session and forget it", handler: s.proxy, status: 204, name: "killPTY"},
		{method: "POST", pattern: "/v1/sandboxes/{id}/ptys/{pty}/resize", scope: auth.ScopeExec, summary: "Set a terminal's size", handler: s.proxy, body: sdk.ResizeRequest{}, status: 200, response: sdk.PTY{}, name: "resizePTY"},
		{method: "GET", pattern: "/v1/sandboxes/{id}/ptys/{pty}/attach", scope: auth.ScopeExec, summary: "Attach to a terminal over a WebSocket: binary frames are its bytes both ways, text frames JSON PTYControl (\"resize\" from the client; \"exit\" from the server, then a close; \"error\" INSTANCE_LOST naming the stop reason when the instance ends first, then a close 1001 whose reason names it too). Recent output is replayed first. Closing detaches.", handler: s.attachPTY, lookup: true, query: []param{{"replay", "boolean", "send the retained recent output first (default true)"}}, status: 101, name: "attachPTY", frames: sdk.PTYControl{}},

		{method: "GET", pattern: "/v1/sandboxes/{id}/watch", scope: auth.ScopeExec, summary: "Watch a path: an NDJSON stream of WatchEvents (ready, then create, write, remove, rename)", handler: s.streamProxy, onlyRunning: true, query: []param{{"path", "string", "directory or file to watch"}, {"recursive", "boolean", "watch subdirectories too"}, {"include", "[]string", "glob; repeat for several; only matching paths are reported"}, {"exclude", "[]string", "glob; repeat for several; matching paths and directories are skipped"}}, status: 200, response: ndjson{}, name: "watchFiles", events: sdk.WatchEvent{}},

		{method: "POST", pattern: "/v1/sandboxes/{id}/contexts", scope: auth.ScopeExec, summary: "Create a code context: a long-lived python, javascript or bash interpreter whose state persists between runs", handler: s.proxy, body: sdk.CreateContextRequest{}, status: 201, response: sdk.Context{}, name: "createContext"},
		{method: "GET", pattern: "/v1/sandboxes/{id}/contexts", scope: auth.ScopeExec, summary: "List live code contexts", handler: s.proxy, lookup: true, status: 200, response: []sdk.Context{}, name: "listContexts"},
		{method: "GET", pattern: "/v1/sandboxes/{id}/contexts/{cid}", scope: auth.ScopeExec, summary: "Get a code context (404 CONTEXT_NOT_FOUND once its interpreter is gone)", handler: s.proxy, lookup: true, status: 200, response: sdk.Context{}, name: "getContext"},
		{method: "DELETE", pattern: "/v1/sandboxes/{id}/contexts/{cid}", scope: auth.ScopeExec, summary: "End a code context", handler: s.proxy, status: 204, name: "deleteContext"},
		{method: "POST", pattern: "/v1/sandboxes/{id}/contexts/{cid}/run", scope: auth.ScopeExec, summary: "Run code in a context; with stream=true the answer is NDJSON RunEvents", handler: s.runCode, query: []param{{"stream", "boolean", "stream events as NDJSON"}}, body: sdk.RunCodeRequest{}, status: 200, response: sdk.RunResult{}, name: "runCodeInContext", events: sdk.RunEvent{}},
		{method: "POST", pattern: "/v1/sandboxes/{id}/run", scope: auth.ScopeExec, summary: "Run code once in a fresh interpreter (stateless); with stream=true the answer is NDJSON RunEvents", handler: s.runCode, query: []param{{"stream", "boolean", "stream events as NDJSON"}}, body: sdk.RunRequest{}, status: 200, response: sdk.RunResult{}, name: "runCode", events: sdk.RunEvent{}},
		{method: "POST", pattern: "/v1/sandboxes/{id}/git/clone", summary: "Clone a repository (https, http or file URL) into an absent or empty directory; username/token authenticate over HTTP(S) and are stored in the sandbox only with storeCredentials", handler: s.git, body: sdk.GitCloneRequest{}, status: 200, response: sdk.GitStatus{}},
		{method: "POST", pattern: "/v1/sandboxes/{id}/git/status", summary: "A repository's branch, HEAD and changed, staged and untracked files", handler: s.git, body: sdk.GitRepoRequest{}, status: 200, response: sdk.GitStatus{}},
		{method: "POST", pattern: "/v1/sandboxes/{id}/git/branches", summary: "A repository's local and remote branches and the current one", handler: s.git, body: sdk.GitRepoRequest{}, status: 200, response: sdk.GitBranches{}},
		{method: "POST", pattern: "/v1/sandboxes/{id}/git/checkout", summary: "Switch to a branch (create: make it at HEAD; a branch only origin has is made from it); uncommitted changes refuse it (409 GIT_CONFLICT) unless force", handler: s.git, body: sdk.GitCheckoutRequest{}, status: 200, response: sdk.GitStatus{}},
		{method: "POST", pattern: "/v1/sandboxes/{id}/git/add", summary: "Stage files (\".\" stages every change, removals too)", handler: s.git, body: sdk.GitAddRequest{}, status: 200, response: sdk.GitStatus{}},
		{method: "POST", pattern: "/v1/sandboxes/{id}/git/commit", summary: "Commit what is staged (all: tracked changes too); the author defaults to the git config's user.name and user.email", handler: s.git, body: sdk.GitCommitRequest{}, status: 200, response: sdk.GitCommit{}},
		{method: "POST", pattern: "/v1/sandboxes/{id}/git/push", summary: "Push a branch (default the current one) to a remote (default origin); 400 GIT_AUTH_FAILED when the server refuses the credentials, 409 GIT_CONFLICT when it is not a fast-forward", handler: s.git, body: sdk.GitSyncRequest{}, status: 200, response: sdk.GitSyncResult{}},
		{method: "POST", pattern: "/v1/sandboxes/{id}/git/pull", summary: "Fetch a branch and fast-forward the current one to it (409 GIT_CONFLICT when that needs a merge)", handler: s.git, body: sdk.GitSyncRequest{}, status: 200, response: sdk.GitSyncResult{}},
		{method: "POST", pattern: "/v1/sandboxes/{id}/git/log", summary: "Commits reachable from HEAD, newest first", handler: s.git, body: sdk.GitLogRequest{}, status: 200, response: []sdk.GitCommit{}},

		{method: "GET", pattern: "/v1/sandboxes/{id}/stats", scope: auth.ScopeSandboxesRead, summary: "What a sandbox uses now: CPU, memory, pids, disk, network; a sandbox without an instance reads as zeros (never starts it, no activity)", handler: s.sandboxStats, passive: true, status: 200, response: sdk.SandboxStats{}, name: "getSandboxStats"},
		{method: "GET", pattern: "/v1/sandboxes/{id}/network", scope: auth.ScopeSandboxesRead, summary: "Get a sandbox's network: mode, address, gateway, egress policy", handler: s.getNetwork, passive: true, status: 200, response: sdk.NetworkInfo{}, name: "getNetwork"},
		{method: "PUT", pattern: "/v1/sandboxes/{id}/egress", scope: auth.ScopeSandboxesWrite, summary: "Replace a bridge sandbox's egress policy; a running sandbox gets it at once", handler: s.setEgress, body: sdk.EgressPolicy{}, status: 200, response: sdk.NetworkInfo{}, name: "setEgress"},
		{method: "POST", pattern: "/v1/sandboxes/{id}/ports", scope: auth.ScopeSandboxesWrite, summary: "Expose a port through the preview proxy (201; 200 when it was already exposed)", handler: s.exposePort, body: sdk.ExposePortRequest{}, status: 201, response: sdk.Port{}, name: "exposePort", otherStatus: 200},
		{method: "GET", pattern: "/v1/sandboxes/{id}/ports", scope: auth.ScopeSandboxesRead, summary: "List exposed ports", handler: s.listPorts, passive: true, status: 200, response: []sdk.Port{}, name: "listPorts"},
		{method: "DELETE", pattern: "/v1/sandboxes/{id}/ports/{port}", scope: auth.ScopeSandboxesWrite, summary: "Unexpose a port; its token stops working", handler: s.unexposePort, status: 204, name: "unexposePort"},
		{method: "POST", pattern: "/v1/sandboxes/{id}/signed-urls", scope: auth.ScopeSandboxesWrite, summary: "Make a preview URL of an exposed port that works without key or token until it expires", handler: s.signURL, body: sdk.SignPortRequest{}, status: 201, response: sdk.SignedURL{}, name: "signPreviewURL"},
		{method: "GET", pattern: "/v1/sandboxes/{id}/ports/{port}/{path...}", summary: previewDoc, handler: s.previewPath, onlyRunning: true, public: true, query: previewQ, status: 200, response: rawBody{}, name: "previewGet"},
		{method: "POST", pattern: "/v1/sandboxes/{id}/ports/{port}/{path...}", summary: previewDoc, handler: s.previewPath, public: true, query: previewQ, status: 200, response: rawBody{}, name: "previewPost"},
		{method: "PUT", pattern: "/v1/sandboxes/{id}/ports/{port}/{path...}", summary: previewDoc, handler: s.previewPath, public: true, query: previewQ, status: 200, response: rawBody{}, name: "previewPut"},
		{method: "PATCH", pattern: "/v1/sandboxes/{id}/ports/{port}/{path...}", summary: previewDoc, handler: s.previewPath, public: true, query: previewQ, status: 200, response: rawBody{}, name: "previewPatch"},
		{method: "DELETE", pattern: "/v1/sandboxes/{id}/ports/{port}/{path...}", summary: previewDoc, handler: s.previewPath, public: true, query: previewQ, status: 200, response: rawBody{}, name: "previewDelete"},

		// Pause/resume, snapshots, forks, lineage (snapshots.go).
		{method: "POST", pattern: "/v1/sandboxes/{id}/pause", scope: auth.ScopeSandboxesWrite, summary: "Pause a started sandbox: class gvisor saves every process and its memory to disk and frees CPU and RAM; class container freezes the processes", handler: s.pauseSandbox, passive: true, status: 200, response: sdk.Sandbox{}, name: "pauseSandbox"},
		{method: "POST", pattern: "/v1/sandboxes/{id}/resume", scope: auth.ScopeSandboxesWrite, summary: "Resume a paused sandbox: every process goes on where it was", handler: s.resumeSandbox, passive: true, status: 200, response: sdk.Sandbox{}, name: "resumeSandbox"},
		{method: "POST", pattern: "/v1/sandboxes/{id}/snapshots", scope: auth.ScopeSandboxesWrite, summary: "Save a sandbox as a named snapshot: its filesystem as a layer, with includeMemory (class gvisor) its running processes too", handler: s.createSnapshot, passive: true, body: sdk.CreateSnapshotRequest{}, status: 201, response: sdk.Snapshot{}, name: "createSnapshot"},
		{method: "POST", pattern: "/v1/sandboxes/{id}/fork", scope: auth.ScopeSandboxesWrite, summary: "Make count independent copies of a sandbox: filesystem, and for class gvisor its running processes", handler: s.forkSandbox, passive: true, body: sdk.ForkRequest{}, status: 201, response: sdk.ForkResult{}, name: "forkSandbox"},
		{method: "GET", pattern: "/v1/sandboxes/{id}/forks", scope: auth.ScopeSandboxesRead, summary: "The sandboxes forked from a sandbox", handler: s.listForks, passive: true, status: 200, response: []sdk.Sandbox{}, name: "listForks"},
		{method: "GET", pattern: "/v1/sandboxes/{id}/parent", scope: auth.ScopeSandboxesRead, summary: "The sandbox a fork was made from (404 NO_PARENT if it is no fork)", handler: s.getParent, passive: true, status: 200, response: sdk.Sandbox{}, name: "getParent"},
		{method: "GET", pattern: "/v1/sandboxes/{id}/ancestors", scope: auth.ScopeSandboxesRead, summary: "A fork's parent, its parent and so on, nearest first", handler: s.listAncestors, passive: true, status: 200, response: []sdk.Sandbox{}, name: "listAncestors"},
		{method: "POST", pattern: "/v1/sandboxes/{id}/ssh-access", summary: "Create an SSH access token (the SSH user name; shown only in this answer, with a ready-to-paste ssh command), or with publicKey register a key that logs in as the sandbox's id; 503 SSH_DISABLED without --ssh-listen", handler: s.createSSHAccess, passive: true, body: sdk.CreateSSHAccessRequest{}, status: 201, response: sdk.SSHAccess{}},
		{method: "GET", pattern: "/v1/sandboxes/{id}/ssh-access", summary: "List a sandbox's SSH access tokens and keys (without the tokens)", handler: s.listSSHAccess, passive: true, status: 200, response: []sdk.SSHAccess{}},
		{method: "DELETE", pattern: "/v1/sandboxes/{id}/ssh-access/{access}", summary: "Revoke an SSH access token or key; connections it opened are closed", handler: s.revokeSSHAccess, passive: true, status: 204},
		{method: "GET", pattern: "/v1/snapshots", scope: auth.ScopeSandboxesRead, summary: "List snapshots", handler: s.listSnapshots, status: 200, response: []sdk.Snapshot{}, name: "listSnapshots"},
		{method: "GET", pattern: "/v1/snapshots/{name}", scope: auth.ScopeSandboxesRead, summary: "Get a snapshot", handler: s.getSnapshot, status: 200, response: sdk.Snapshot{}, name: "getSnapshot"},
		{method: "DELETE", pattern: "/v1/snapshots/{name}", scope: auth.ScopeSandboxesWrite, summary: "Delete a snapshot; sandboxes made from it keep working", handler: s.deleteSnapshot, status: 204, name: "deleteSnapshot"},
		{method: "POST", pattern: "/v1/volumes", summary: "Create a volume: an ext4 filesystem of sizeMiB (default 1024) that sandboxes mount at create with volumes: [{name, path, readOnly}]; writes past the size fail with ENOSPC", handler: s.createVolume, body: sdk.CreateVolumeRequest{}, status: 201, response: sdk.Volume{}},
		{method: "GET", pattern: "/v1/volumes", summary: "List volumes with their use and the sandboxes that mount them", handler: s.listVolumes, status: 200, response: []sdk.Volume{}},
		{method: "GET", pattern: "/v1/volumes/{name}", summary: "Get a volume", handler: s.getVolume, status: 200, response: sdk.Volume{}},
		{method: "DELETE", pattern: "/v1/volumes/{name}", summary: "Delete a volume and its files; 409 VOLUME_IN_USE while a sandbox (in any state) mounts it, unless force=true", handler: s.deleteVolume, query: []param{{"force", "boolean", "delete even if sandboxes mount it (they then fail to start)"}}, status: 204},
		{method: "POST", pattern: "/v1/sandboxes/{id}/backups", summary: "Back up a directory of the sandbox (owners, modes, xattrs, hard links) as tar+zstd into the blob store (local or S3); expiresInSeconds deletes it after that long", handler: s.createBackup, body: sdk.CreateBackupRequest{}, status: 201, response: sdk.Backup{}},
		{method: "GET", pattern: "/v1/backups", summary: "List backups that have not expired, oldest first", handler: s.listBackups, query: []param{{"sandbox", "string", "only backups of this sandbox (id or name)"}}, status: 200, response: []sdk.Backup{}},
		{method: "GET", pattern: "/v1/backups/{backup}", summary: "Get a backup", handler: s.getBackup, status: 200, response: sdk.Backup{}},
		{method: "DELETE", pattern: "/v1/backups/{backup}", summary: "Delete a backup", handler: s.deleteBackup, status: 204},
		{method: "POST", pattern: "/v1/backups/{backup}/restore", summary: "Restore a backup into a sandbox (started if need be) at path (default: where it was taken), which must be missing or empty (409 BACKUP_TARGET_NOT_EMPTY); a damaged backup is refused (409 BACKUP_CORRUPT) and nothing is written", handler: s.restoreBackup, body: sdk.RestoreBackupRequest{}, status: 200, response: sdk.Backup{}},

		{method: "GET", pattern: "/v1/images", scope: auth.ScopeSandboxesRead, summary: "List images", handler: s.listImages, status: 200, response: []sdk.Image{}, name: "listImages"},
		{method: "POST", pattern: "/v1/images/import", scope: auth.ScopeImages, summary: "Import an image from a tar stream: a rootfs tree, an OCI image layout or a docker-save tarball (plain, gzip or zstd)", handler: s.importImage, query: []param{{"name", "string", "name of the new image"}}, body: rawBody{}, status: 201, response: sdk.Image{}, name: "importImage"},
		{method: "POST", pattern: "/v1/images/pull", scope: auth.ScopeImages, summary: "Pull an image from an OCI registry", handler: s.pullImage, body: sdk.PullRequest{}, status: 201, response: sdk.Image{}, name: "pullImage"},
		{method: "POST", pattern: "/v1/images/build", summary: "Build an image from a Dockerfile in a build context (a tar stream, plain or gzip): FROM (an image sbx has), RUN (in a build sandbox with the default egress policy and limits), COPY/ADD from the context, ENV, ARG, WORKDIR, USER, ENTRYPOINT, CMD, LABEL; each RUN/COPY/ADD a cached layer. The answer streams NDJSON BuildEvents ending with \"done\" or \"error\"; a bad or unsupported Dockerfile is a 400 naming the line", handler: s.buildImage, query: []param{{"name", "string", "the image to make (replaced if it exists)"}, {"dockerfile", "string", "path of the Dockerfile in the context (default Dockerfile)"}, {"buildArg", "string", "NAME=VALUE for an ARG; repeat for several"}, {"noCache", "boolean", "run every step even when the cache has it"}, {"timeoutSeconds", "integer", "the whole build (default 1800)"}}, body: rawBody{}, status: 200, response: ndjson{}},
		{method: "POST", pattern: "/v1/images/build/steps", summary: "Build an image from the JSON form of the steps (from, then run/copy/env/workdir/user/entrypoint/cmd/labels, files as the context); progress as for /v1/images/build", handler: s.buildSteps, body: sdk.BuildRequest{}, status: 200, response: ndjson{}},
		{method: "GET", pattern: "/v1/images/{name...}", scope: auth.ScopeSandboxesRead, summary: "Get an image", handler: s.getImage, status: 200, response: sdk.Image{}, name: "getImage"},
		{method: "DELETE", pattern: "/v1/images/{name...}", scope: auth.ScopeImages, summary: "Delete an image (409 while a sandbox uses it)", handler: s.deleteImage, status: 204, name: "deleteImage"},

		// API keys, teams, quotas and the audit log (auth_routes.go). An admin
		// key of team default administers all teams; of another team, its own.
		{method: "POST", pattern: "/v1/keys", scope: auth.ScopeAdmin, summary: "Create an API key; the answer holds its secret, shown only this once", handler: s.createKey, body: sdk.CreateKeyRequest{}, status: 201, response: sdk.CreatedKey{}},
		{method: "GET", pattern: "/v1/keys", scope: auth.ScopeAdmin, summary: "List API keys (never their secrets)", handler: s.listKeys, query: []param{{"team", "string", "only this team's keys (root admin only)"}}, status: 200, response: []sdk.APIKey{}},
		{method: "DELETE", pattern: "/v1/keys/{key}", scope: auth.ScopeAdmin, summary: "Revoke an API key; it is refused from the next request on", handler: s.revokeKey, status: 200, response: sdk.APIKey{}},
		{method: "POST", pattern: "/v1/teams", scope: auth.ScopeAdmin, summary: "Create a team (Daytona: organization, E2B: team) with its quotas", handler: s.createTeam, body: sdk.CreateTeamRequest{}, status: 201, response: sdk.Team{}},
		{method: "GET", pattern: "/v1/teams", scope: auth.ScopeAdmin, summary: "List teams", handler: s.listTeams, status: 200, response: []sdk.Team{}},
		{method: "GET", pattern: "/v1/teams/{team}", scope: auth.ScopeTeamRead, summary: "Get a team: the key's own, or any with the root admin key", handler: s.getTeam, status: 200, response: sdk.Team{}},
		{method: "PUT", pattern: "/v1/teams/{team}/quotas", scope: auth.ScopeAdmin, summary: "Replace a team's quotas (0: no limit)", handler: s.setQuotas, body: sdk.Quotas{}, status: 200, response: sdk.Team{}},
		{method: "DELETE", pattern: "/v1/teams/{team}", scope: auth.ScopeAdmin, summary: "Delete a team that owns no sandboxes, snapshots or live keys (409 TEAM_NOT_EMPTY)", handler: s.deleteTeam, status: 204},
		{method: "PUT", pattern: "/v1/teams/{team}/webhook", scope: auth.ScopeAdmin, summary: "Send a team's events (as the --webhook URLs get every team's, signed with secret) to url; root admin only", handler: s.setTeamWebhook, body: sdk.TeamWebhook{}, status: 200, response: sdk.TeamWebhook{}},
		{method: "DELETE", pattern: "/v1/teams/{team}/webhook", scope: auth.ScopeAdmin, summary: "Stop sending a team's events to its webhook", handler: s.deleteTeamWebhook, status: 204},
		{method: "GET", pattern: "/v1/teams/{team}/usage", scope: auth.ScopeTeamRead, summary: "What a team holds now against its quotas", handler: s.teamUsage, status: 200, response: sdk.TeamUsage{}},
		{method: "GET", pattern: "/v1/audit", scope: auth.ScopeAdmin, summary: "The audit log: every mutating request (key, team, method, path, status, code, time), oldest first", handler: s.listAudit, query: []param{{"after", "integer", "only entries with a higher seq"}, {"limit", "integer", "at most this many (default 1000)"}, {"team", "string", "only this team's (root admin only)"}}, status: 200, response: []sdk.AuditEntry{}},
	}
}
