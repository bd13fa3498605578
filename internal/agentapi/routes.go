package agentapi

// Route is one operation the agent serves. Path is a net/http ServeMux
// pattern: "{name}" is a path parameter.
//
// The daemon's API serves every toolbox route at /v1/sandboxes/{id} + Path
// and forwards it here with the prefix removed; internal/api's tests check
// that each forwarded route is in Routes.
type Route struct {
	Method string
	Path   string
}

// RestoreStaging prefixes the directory UnpackDir unpacks into beside its
// target before renaming it into place.
const RestoreStaging = ".sbx-restore-"

// Pattern is the route as a ServeMux pattern: "POST /exec".
func (r Route) Pattern() string { return r.Method + " " + r.Path }

// The agent's routes. Bodies are the sdk types named in each comment.
var (
	Health        = Route{"GET", "/healthz"}                // → Hello: {"ok": true, "pid": N, "protocol": V}
	Exec          = Route{"POST", "/exec"}                  // wire.ExecRequest → wire.ExecResult, or with ?stream=true NDJSON wire.ExecEvent
	Shutdown      = Route{"POST", "/shutdown"}              // ?graceSeconds=S → 202
	Sync          = Route{"POST", "/sync"}                  // flush file data → 200
	Suspend       = Route{"POST", "/suspend"}               // close the socket for a checkpoint → 200 (409 CHECKPOINT_REFUSED)
	Run           = Route{"POST", "/run"}                   // wire.RunRequest → wire.RunResult, or streamed wire.RunEvent
	Watch         = Route{"GET", "/watch"}                  // NDJSON wire.WatchEvent
	PutFile       = Route{"PUT", "/files"}                  // raw body → wire.FileInfo
	GetFile       = Route{"GET", "/files"}                  // → raw body
	DeleteFile    = Route{"DELETE", "/files"}               // → 204
	ListFiles     = Route{"GET", "/files/list"}             // → []wire.FileInfo
	StatFile      = Route{"GET", "/files/stat"}             // → wire.FileInfo
	Mkdir         = Route{"POST", "/files/mkdir"}           // wire.MkdirRequest → wire.FileInfo
	Move          = Route{"POST", "/files/move"}            // wire.MoveRequest → wire.FileInfo
	GetTar        = Route{"GET", "/files/tar"}              // → tar stream of a directory
	PutTar        = Route{"PUT", "/files/tar"}              // tar stream (plain or gzip) → extracted into a directory
	CreateContext = Route{"POST", "/contexts"}              // wire.CreateContextRequest → wire.Context
	ListContexts  = Route{"GET", "/contexts"}               // → []wire.Context
	GetContext    = Route{"GET", "/contexts/{cid}"}         // → wire.Context
	DeleteContext = Route{"DELETE", "/contexts/{cid}"}      // → 204
	RunContext    = Route{"POST", "/contexts/{cid}/run"}    // wire.RunCodeRequest → wire.RunResult, or streamed wire.RunEvent
	StartProcess  = Route{"POST", "/processes"}             // wire.StartProcessRequest → wire.Process
	ListProcesses = Route{"GET", "/processes"}              // → []wire.Process
	GetProcess    = Route{"GET", "/processes/{process}"}    // → wire.Process
	DeleteProcess = Route{"DELETE", "/processes/{process}"} // → 204
	ProcessLogs   = Route{"GET", "/processes/{process}/logs"}
	WriteStdin    = Route{"POST", "/processes/{process}/stdin"}
	CloseStdin    = Route{"POST", "/processes/{process}/stdin/close"}
	SignalProcess = Route{"POST", "/processes/{process}/signal"}
	WaitProcess   = Route{"POST", "/processes/{process}/wait"}
	WaitForLog    = Route{"POST", "/processes/{process}/wait-for-log"}
	WaitForPort   = Route{"POST", "/processes/{process}/wait-for-port"}
	CreateSession = Route{"POST", "/sessions"}
	ListSessions  = Route{"GET", "/sessions"}
	GetSession    = Route{"GET", "/sessions/{session}"}
	DeleteSession = Route{"DELETE", "/sessions/{session}"}
	SessionExec   = Route{"POST", "/sessions/{session}/exec"} // wire.SessionExecRequest → wire.SessionExecResult, or streamed wire.SessionEvent
	CreatePTY     = Route{"POST", "/ptys"}
	ListPTYs      = Route{"GET", "/ptys"}
	GetPTY        = Route{"GET", "/ptys/{pty}"}
	DeletePTY     = Route{"DELETE", "/ptys/{pty}"}
	ResizePTY     = Route{"POST", "/ptys/{pty}/resize"}
	AttachPTY     = Route{"GET", "/ptys/{pty}/attach"} // WebSocket
	SetEnv        = Route{"PATCH", "/env"}             // map[string]*string (null unsets) → 204; later processes get it

	// git, run by the agent (go-git): bodies sdk.Git*Request.
	GitClone    = Route{"POST", "/git/clone"}    // → wire.GitStatus
	GitStatus   = Route{"POST", "/git/status"}   // → wire.GitStatus
	GitBranches = Route{"POST", "/git/branches"} // → wire.GitBranches
	GitCheckout = Route{"POST", "/git/checkout"} // → wire.GitStatus
	GitAdd      = Route{"POST", "/git/add"}      // → wire.GitStatus
	GitCommit   = Route{"POST", "/git/commit"}   // → wire.GitCommit
	GitPush     = Route{"POST", "/git/push"}     // → wire.GitSyncResult
	GitPull     = Route{"POST", "/git/pull"}     // → wire.GitSyncResult
	GitLog      = Route{"POST", "/git/log"}      // → []wire.GitCommit
	ForwardTCP  = Route{"GET", "/forward"}       // ?host=H&port=N, Upgrade: tcp → 101, then the bytes of a TCP connection made inside the sandbox (forward.go)
	// Directory backups (package treetar: owners, modes, xattrs, hard links kept).
	PackDir    = Route{"GET", "/backup"}       // ?path=DIR → treetar stream
	UnpackDir  = Route{"PUT", "/backup"}       // treetar stream → ?path=DIR, which must be missing or empty → wire.FileInfo
	ExecAttach = Route{"POST", "/exec/attach"} // one line of JSON wire.ExecRequest, then stdin as it comes → NDJSON wire.ExecEvent (execattach.go)

	// The desktop (internal/agent/desktop*.go): sdk.Desktop* bodies.
	DesktopStart      = Route{"POST", "/desktop/start"}                  // wire.DesktopStartRequest → wire.DesktopStatus
	DesktopStop       = Route{"POST", "/desktop/stop"}                   // → wire.DesktopStatus
	DesktopStatus     = Route{"GET", "/desktop/status"}                  // → wire.DesktopStatus
	DesktopScreenshot = Route{"GET", "/desktop/screenshot"}              // ?format=png|jpeg&quality=&cursor=&x=&y=&width=&height= → image
	DesktopCursor     = Route{"GET", "/desktop/mouse"}                   // → wire.DesktopPoint
	DesktopMouseMove  = Route{"POST", "/desktop/mouse/move"}             // wire.MouseMoveRequest → wire.DesktopPoint
	DesktopClick      = Route{"POST", "/desktop/mouse/click"}            // wire.MouseClickRequest → wire.DesktopPoint
	DesktopDrag       = Route{"POST", "/desktop/mouse/drag"}             // wire.MouseDragRequest → wire.DesktopPoint
	DesktopScroll     = Route{"POST", "/desktop/mouse/scroll"}           // wire.MouseScrollRequest → wire.DesktopPoint
	DesktopType       = Route{"POST", "/desktop/keyboard/type"}          // wire.TypeTextRequest → 204
	DesktopPress      = Route{"POST", "/desktop/keyboard/press"}         // wire.PressKeyRequest → 204
	DesktopWindows    = Route{"GET", "/desktop/windows"}                 // → []wire.DesktopWindow
	DesktopFocus      = Route{"POST", "/desktop/windows/{window}/focus"} // → 204
	DesktopLaunch     = Route{"POST", "/desktop/launch"}                 // wire.LaunchRequest → 201 wire.Process
	// One program of the desktop (internal/agent/desktop_programs.go).
	DesktopProgramRestart = Route{"POST", "/desktop/programs/{program}/restart"} // → wire.DesktopProgram
	DesktopProgramLogs    = Route{"GET", "/desktop/programs/{program}/logs"}     // → wire.DesktopProgramLogs

	// Files for an account (internal/agent/files_owned.go): ?owner=name|uid[:gid].
	PutFileOwned = Route{"PUT", "/files/owned"}        // ?path=&mode=&parents= raw body → wire.FileInfo
	MkdirOwned   = Route{"POST", "/files/mkdir/owned"} // ?path=&mode=&parents= → wire.FileInfo

	// ?op=read|write&path=&mode=&parents=, Upgrade: sbx-fd → 101 and the
	// open file's descriptor; the daemon moves the bytes (filefd.go).
	FileFD = Route{"POST", "/files/fd"}

	// Contexts by the caller's name (internal/agent/contexts_named.go).
	EnsureContext  = Route{"PUT", "/contexts/{cid}"}          // wire.CreateContextRequest → wire.Context: the live one or a new one (201)
	RestartContext = Route{"POST", "/contexts/{cid}/restart"} // → wire.Context: a fresh interpreter, same id
	PTYInput       = Route{"POST", "/ptys/{pty}/input"}       // raw body typed into the terminal → 204 (pty_input.go)
)

// File operations done next to the files (internal/agent/fileops.go).
var (
	SetPermissions = Route{"POST", "/files/permissions"} // PermissionsRequest → wire.FileInfo
	Grep           = Route{"POST", "/files/grep"}        // GrepRequest → GrepResult
	Glob           = Route{"POST", "/files/glob"}        // GlobRequest → GlobResult
	Replace        = Route{"POST", "/files/replace"}     // ReplaceRequest → []ReplaceResult
	LookupUser     = Route{"GET", "/user"}               // ?name=NAME|UID (default: who commands run as) → User
)

// Recorded session commands (internal/agent/sessioncmds.go).
var (
	SessionRun          = Route{"POST", "/sessions/{session}/commands"}                 // SessionRunRequest → SessionCommand
	SessionCommands     = Route{"GET", "/sessions/{session}/commands"}                  // → []SessionCommand
	SessionCommandGet   = Route{"GET", "/sessions/{session}/commands/{command}"}        // → SessionCommand
	SessionCommandLogs  = Route{"GET", "/sessions/{session}/commands/{command}/logs"}   // → SessionLogs, or with ?follow=true NDJSON SessionLogEvent
	SessionCommandInput = Route{"POST", "/sessions/{session}/commands/{command}/input"} // SessionInput → 204
)

// More git (internal/agent/git_repo.go): bodies in sdk/git_repo.go.
var (
	GitInit         = Route{"POST", "/git/init"}            // GitInitRequest → 204
	GitDeleteBranch = Route{"POST", "/git/branches/delete"} // GitBranchRequest → 204
	GitRemotes      = Route{"POST", "/git/remotes/list"}    // wire.GitRepoRequest → []GitRemote
	GitAddRemote    = Route{"POST", "/git/remotes"}         // GitAddRemoteRequest → 204
	GitReset        = Route{"POST", "/git/reset"}           // GitResetRequest → wire.GitStatus
	GitRestore      = Route{"POST", "/git/restore"}         // GitRestoreRequest → wire.GitStatus
	GitConfig       = Route{"POST", "/git/config"}          // GitConfigRequest → GitConfigValue (git_config.go)
	GitCredentials  = Route{"POST", "/git/credentials"}     // GitCredentialsRequest → 204 (git_credentials.go)
)

// Language servers (internal/agent/lsp, internal/agent/lsp_routes.go): bodies in sdk/lsp.go.
var (
	LSPStart            = Route{"POST", "/lsp/start"}             // wire.LSPServerRequest → wire.LSPServer
	LSPStop             = Route{"POST", "/lsp/stop"}              // wire.LSPServerRequest → 204
	LSPDidOpen          = Route{"POST", "/lsp/did-open"}          // wire.LSPDocumentRequest → 204
	LSPDidClose         = Route{"POST", "/lsp/did-close"}         // wire.LSPDocumentRequest → 204
	LSPDocumentSymbols  = Route{"POST", "/lsp/document-symbols"}  // wire.LSPDocumentRequest → []wire.LSPSymbol
	LSPWorkspaceSymbols = Route{"POST", "/lsp/workspace-symbols"} // wire.LSPWorkspaceSymbolsRequest → []wire.LSPSymbol
	LSPCompletions      = Route{"POST", "/lsp/completions"}       // wire.LSPCompletionRequest → wire.LSPCompletionList
)

// Screen recordings of the desktop (internal/agent/desktop_recording.go): bodies in sdk/desktop_recording.go.
var (
	RecordingStart  = Route{"POST", "/desktop/recordings"}                  // wire.RecordingStartRequest → 201 wire.Recording
	RecordingList   = Route{"GET", "/desktop/recordings"}                   // → []wire.Recording
	RecordingGet    = Route{"GET", "/desktop/recordings/{recording}"}       // → wire.Recording
	RecordingStop   = Route{"POST", "/desktop/recordings/{recording}/stop"} // → wire.Recording
	RecordingDelete = Route{"DELETE", "/desktop/recordings/{recording}"}    // → 204 (a running one is stopped first)
	RecordingFile   = Route{"GET", "/desktop/recordings/{recording}/file"}  // → the video (video/mp4)
)

// Routes lists every route the agent serves; the agent's mux is built from
// it (agent.routes fails to start on a route it has no handler for).
var Routes = []Route{
	Health, Exec, Shutdown, Sync, Suspend, Run, Watch,
	PutFile, GetFile, DeleteFile, ListFiles, StatFile, Mkdir, Move, GetTar, PutTar,
	SetPermissions, Grep, Glob, Replace, LookupUser,
	SessionRun, SessionCommands, SessionCommandGet, SessionCommandLogs, SessionCommandInput,
	CreateContext, ListContexts, GetContext, DeleteContext, RunContext,
	StartProcess, ListProcesses, GetProcess, DeleteProcess, ProcessLogs, WriteStdin, CloseStdin,
	SignalProcess, WaitProcess, WaitForLog, WaitForPort,
	CreateSession, ListSessions, GetSession, DeleteSession, SessionExec,
	CreatePTY, ListPTYs, GetPTY, DeletePTY, ResizePTY, AttachPTY,
	SetEnv, ForwardTCP,
	GitClone, GitStatus, GitBranches, GitCheckout, GitAdd, GitCommit, GitPush, GitPull, GitLog,
	GitInit, GitDeleteBranch, GitRemotes, GitAddRemote, GitReset, GitRestore, GitConfig, GitCredentials,
	PackDir, UnpackDir,
	ExecAttach,
	DesktopStart, DesktopStop, DesktopStatus, DesktopScreenshot, DesktopCursor, DesktopMouseMove, DesktopClick,
	DesktopDrag, DesktopScroll, DesktopType, DesktopPress, DesktopWindows, DesktopFocus, DesktopLaunch,
	DesktopProgramRestart, DesktopProgramLogs,
	PutFileOwned, MkdirOwned, EnsureContext, RestartContext, PTYInput, FileFD,
	LSPStart, LSPStop, LSPDidOpen, LSPDidClose, LSPDocumentSymbols, LSPWorkspaceSymbols, LSPCompletions,
	RecordingStart, RecordingList, RecordingGet, RecordingStop, RecordingDelete, RecordingFile,
}

// Lookup returns the route of Routes with this method and pattern path.
func Lookup(method, path string) (Route, bool) {
	for _, r := range Routes {
		if r.Method == method && r.Path == path {
			return r, true
		}
	}
	return Route{}, false
}
