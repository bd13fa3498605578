// Package agent is the in-instance agent and the host's client for it.
//
// The sbx binary runs as PID 1 inside every instance (`sbx agent`). It starts
// every process itself, reaps zombies, and serves the toolbox (exec, files) as
// HTTP on a unix socket in a directory bind-mounted from the host, so the
// daemon can reach it and can reattach after a restart (docs/architecture.md, invariant 5).
//
// Run is the agent. The routes it serves, and the client the daemon reaches
// it with, are in internal/agentapi.
package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/sbxhq/sbx/internal/agent/lsp"
	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/wire"
)

// Config configures Run. Zero values take the defaults.
type Config struct {
	// Socket is where the agent listens; default RunPath/AgentSock.
	Socket string
	// DefaultCwd is where commands run and relative paths resolve; default
	// $SBX_WORKDIR, else /workspace. Created if missing.
	DefaultCwd string
}

// signalGrace is how long SIGTERM/SIGINT to the agent lets processes finish.
const signalGrace = 10 * time.Second

type server struct {
	cwd         string
	outputLimit int // per stream, for non-streamed exec results

	mu      sync.Mutex
	closing bool             // shutdown began: no new processes
	groups  map[int]struct{} // process groups we started that may still have members

	shutdownReq chan time.Duration // from POST /shutdown: the grace
	runDir      string             // the socket's directory: agent-only files (sessioncmds.go)

	contexts contextSet // code contexts (contexts.go)

	procs    processTable  // background processes (processes.go)
	sessions sessionTable  // persistent shells (sessions.go)
	ptys     ptyTable      // terminals (pty.go)
	quit     chan struct{} // closed at shutdown to end endless streams (stream.go)

	main mainState // the sandbox's main process (mainproc.go)

	desktop desktop // the virtual display (desktop.go)

	lsp        lspState   // language servers (lsp_routes.go)
	recordings recordings // screen recordings that run (desktop_recording.go)
}

// Run serves the agent on cfg.Socket until it is shut down (POST /shutdown,
// SIGTERM or SIGINT, or ctx cancelled, which kills processes at once). It
// stops every process before returning nil.
func Run(ctx context.Context, cfg Config) error {
	dropAgentOnlyEnv()                    // tune.go: GOMAXPROCS=1 is the agent's, not the sandbox's
	if err := protectSelf(); err != nil { // before anything inside can run
		return err
	}
	if cfg.Socket == "" {
		cfg.Socket = filepath.Join(agentapi.RunPath, agentapi.AgentSock)
	}
	if cfg.DefaultCwd == "" {
		cfg.DefaultCwd = os.Getenv("SBX_WORKDIR")
	}
	if cfg.DefaultCwd == "" {
		cfg.DefaultCwd = "/workspace"
	}
	if !filepath.IsAbs(cfg.DefaultCwd) {
		return errdefs.Invalid(wire.CodeInvalidWorkdir, "working directory %q is not absolute", cfg.DefaultCwd)
	}
	if err := os.MkdirAll(cfg.DefaultCwd, 0o755); err != nil {
		return fmt.Errorf("create working directory: %w", err)
	}
	if err := redirectOutput(filepath.Dir(cfg.Socket)); err != nil { // ownlog.go
		return err
	}
	startReaper()

	l, err := listenSuspendable(cfg.Socket) // closes and reopens on SIGUSR2/SIGUSR1 (suspend.go)
	if err != nil {
		return err
	}
	s := &server{
		cwd:         filepath.Clean(cfg.DefaultCwd),
		outputLimit: outputLimit,
		groups:      make(map[int]struct{}),
		shutdownReq: make(chan time.Duration, 1),
		runDir:      filepath.Dir(cfg.Socket),
	}
	s.startMain(filepath.Dir(cfg.Socket)) // the sandbox's entrypoint, if any (mainproc.go)
	srv := &http.Server{Handler: s.routes(), ReadHeaderTimeout: 30 * time.Second}
	srv.RegisterOnShutdown(s.closeStreams) // watch and follow streams would hold Shutdown up
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)

	var grace time.Duration
	var serveErr error
	select {
	case <-ctx.Done():
	case <-sigs:
		grace = signalGrace
	case grace = <-s.shutdownReq:
	case serveErr = <-served:
	}
	s.stopProcesses(grace)

	// Processes are gone, so exec handlers are finishing; let them send
	// their last events before closing connections.
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	os.Remove(cfg.Socket)
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return fmt.Errorf("serve agent socket: %w", serveErr)
	}
	return nil
}

// listen binds the socket under a temporary name, restricts it to 0600 and
// renames it into place, so it is never reachable with a looser mode.
func listen(sock string) (*net.UnixListener, error) {
	dir := filepath.Dir(sock)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create socket directory: %w", err)
	}
	if err := os.Remove(sock); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("remove stale socket: %w", err)
	}
	tmp := filepath.Join(dir, fmt.Sprintf(".sock-%d-%d", os.Getpid(), rand.Uint32()))
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listen on agent socket: %w", err)
	}
	l.SetUnlinkOnClose(false) // Run removes the final name itself
	if err := os.Chmod(tmp, 0o600); err == nil {
		err = os.Rename(tmp, sock)
	}
	if err != nil {
		l.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("install agent socket: %w", err)
	}
	return l, nil
}

// handlers maps each route of the contract to its handler.
func (s *server) handlers() map[agentapi.Route]http.HandlerFunc {
	return map[agentapi.Route]http.HandlerFunc{
		agentapi.Health:        s.handleHealth,
		agentapi.Exec:          s.handleExec,
		agentapi.PutFile:       answerJSON(s.putFile),
		agentapi.GetFile:       s.handleGetFile,
		agentapi.DeleteFile:    s.handleDelete,
		agentapi.ListFiles:     answerJSON(s.list),
		agentapi.StatFile:      s.handleStat,
		agentapi.Mkdir:         s.handleMkdir,
		agentapi.Move:          s.handleMove,
		agentapi.GetTar:        s.handleGetTar, // files_tar.go
		agentapi.PutTar:        answerJSON(s.putTar),
		agentapi.Shutdown:      s.handleShutdown,
		agentapi.Sync:          s.handleSync,    // suspend.go
		agentapi.Suspend:       s.handleSuspend, // suspend.go
		agentapi.CreateContext: s.handleCreateContext,
		agentapi.ListContexts:  s.handleListContexts,
		agentapi.GetContext:    s.handleGetContext,
		agentapi.DeleteContext: s.handleDeleteContext,
		agentapi.RunContext:    s.handleRunContext,
		agentapi.Run:           s.handleRun,
		agentapi.StartProcess:  s.handleStartProcess,
		agentapi.ListProcesses: s.handleListProcesses,
		agentapi.GetProcess:    s.withProcess(s.handleGetProcess),
		agentapi.DeleteProcess: s.withProcess(s.handleDeleteProcess),
		agentapi.ProcessLogs:   s.withProcess(s.handleProcessLogs),
		agentapi.WriteStdin:    s.withProcess(s.handleWriteStdin),
		agentapi.CloseStdin:    s.withProcess(s.handleCloseStdin),
		agentapi.SignalProcess: s.withProcess(s.handleSignalProcess),
		agentapi.WaitProcess:   s.withProcess(s.handleWaitProcess),
		agentapi.WaitForLog:    s.withProcess(s.handleWaitForLog),
		agentapi.WaitForPort:   s.withProcess(s.handleWaitForPort),
		agentapi.CreateSession: s.handleCreateSession,
		agentapi.ListSessions:  s.handleListSessions,
		agentapi.GetSession:    s.withSession(s.handleGetSession),
		agentapi.DeleteSession: s.withSession(s.handleDeleteSession),
		agentapi.SessionExec:   s.withSession(s.handleSessionExec),
		agentapi.CreatePTY:     s.handleCreatePTY,
		agentapi.ListPTYs:      s.handleListPTYs,
		agentapi.GetPTY:        s.withPTY(s.handleGetPTY),
		agentapi.DeletePTY:     s.withPTY(s.handleDeletePTY),
		agentapi.ResizePTY:     s.withPTY(s.handleResizePTY),
		agentapi.AttachPTY:     s.withPTY(s.handleAttachPTY),
		agentapi.Watch:         s.handleWatch,
		agentapi.SetEnv:        s.handleSetEnv,     // env.go
		agentapi.ExecAttach:    s.handleExecAttach, // execattach.go
		agentapi.ForwardTCP:    s.handleForwardTCP, // forward.go

		// for an account, and by the caller's name (files_owned.go, contexts_named.go)
		agentapi.PutFileOwned:   answerJSON(s.putFileOwned),
		agentapi.FileFD:         s.handleFileFD, // files_fd.go
		agentapi.MkdirOwned:     answerJSON(s.mkdirOwned),
		agentapi.EnsureContext:  s.handleEnsureContext,
		agentapi.RestartContext: s.handleRestartContext,
		agentapi.PTYInput:       s.withPTY(s.handlePTYInput), // pty_input.go

		// file operations (fileops.go)
		agentapi.SetPermissions: gitHandler(s.setPermissions),
		agentapi.Grep:           gitHandler(s.grep),
		agentapi.Glob:           gitHandler(s.glob),
		agentapi.Replace:        gitHandler(s.replace),
		agentapi.LookupUser:     answerJSON(lookupAccount),

		// recorded session commands (sessioncmds.go)
		agentapi.SessionRun:          s.withSession(s.handleSessionRun),
		agentapi.SessionCommands:     s.withSession(s.handleSessionCommands),
		agentapi.SessionCommandGet:   s.withSession(s.withSessionCommand(s.handleSessionCommand)),
		agentapi.SessionCommandLogs:  s.withSession(s.withSessionCommand(s.handleSessionCommandLogs)),
		agentapi.SessionCommandInput: s.withSession(s.withSessionCommand(s.handleSessionCommandInput)),

		// git (git*.go)
		agentapi.GitClone:    gitHandler(s.gitClone),
		agentapi.GitStatus:   gitHandler(s.gitStatus),
		agentapi.GitBranches: gitHandler(s.gitBranches),
		agentapi.GitCheckout: gitHandler(s.gitCheckout),
		agentapi.GitAdd:      gitHandler(s.gitAdd),
		agentapi.GitCommit:   gitHandler(s.gitCommit),
		agentapi.GitPush:     gitHandler(s.gitPush),
		agentapi.GitPull:     gitHandler(s.gitPull),
		agentapi.GitLog:      gitHandler(s.gitLog),

		// repository set-up (git_repo.go)
		agentapi.GitInit:         gitHandler(s.gitInit),
		agentapi.GitDeleteBranch: gitHandler(s.gitDeleteBranch),
		agentapi.GitRemotes:      gitHandler(s.gitRemotes),
		agentapi.GitAddRemote:    gitHandler(s.gitAddRemote),
		agentapi.GitReset:        gitHandler(s.gitReset),
		agentapi.GitRestore:      gitHandler(s.gitRestore),
		agentapi.GitConfig:       gitHandler(s.gitConfig), // git_config.go

		agentapi.GitCredentials: gitHandler(s.gitCredentials), // git_credentials.go

		agentapi.PackDir:   s.handlePackDir,         // backup.go
		agentapi.UnpackDir: answerJSON(s.unpackDir), // backup.go

		// desktop (desktop*.go)
		agentapi.DesktopStart:      s.handleDesktopStart,
		agentapi.DesktopStop:       s.handleDesktopStop,
		agentapi.DesktopStatus:     s.handleDesktopStatus,
		agentapi.DesktopScreenshot: s.handleScreenshot,
		agentapi.DesktopCursor:     s.handleDesktopCursor,
		agentapi.DesktopMouseMove:  s.handleMouseMove(),
		agentapi.DesktopClick:      s.handleMouseClick(),
		agentapi.DesktopDrag:       s.handleMouseDrag(),
		agentapi.DesktopScroll:     s.handleMouseScroll(),
		agentapi.DesktopType:       s.handleTypeText(),
		agentapi.DesktopPress:      s.handlePressKey(),
		agentapi.DesktopWindows:    s.handleListWindows,
		agentapi.DesktopFocus:      s.handleFocusWindow,
		agentapi.DesktopLaunch:     s.handleLaunch,

		// one desktop program (desktop_programs.go)
		agentapi.DesktopProgramRestart: s.handleDesktopProgramRestart,
		agentapi.DesktopProgramLogs:    s.handleDesktopProgramLogs,

		// language servers (lsp_routes.go)
		agentapi.LSPStart:            gitHandler(s.lspStart),
		agentapi.LSPStop:             s.handleLSPStop,
		agentapi.LSPDidOpen:          s.lspDocumentHandler((*lsp.Manager).DidOpen),
		agentapi.LSPDidClose:         s.lspDocumentHandler((*lsp.Manager).DidClose),
		agentapi.LSPDocumentSymbols:  gitHandler(s.lspDocumentSymbols),
		agentapi.LSPWorkspaceSymbols: gitHandler(s.lspWorkspaceSymbols),
		agentapi.LSPCompletions:      gitHandler(s.lspCompletions),

		// screen recordings (desktop_recording.go)
		agentapi.RecordingStart:  s.handleRecordingStart,
		agentapi.RecordingList:   s.handleRecordingList,
		agentapi.RecordingGet:    s.handleRecordingGet,
		agentapi.RecordingStop:   s.handleRecordingStop,
		agentapi.RecordingDelete: s.handleRecordingDelete,
		agentapi.RecordingFile:   s.handleRecordingFile,
	}
}

// routes serves agentapi.Routes, each with its handler. A route without a
// handler, or a handler for no route, is a bug that stops the agent at once
// (every agent test starts one).
func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	handlers := s.handlers()
	for _, rt := range agentapi.Routes {
		h, ok := handlers[rt]
		if !ok {
			panic("agent: no handler for " + rt.Pattern())
		}
		mux.HandleFunc(rt.Pattern(), resolveHandles(h)) // handles.go
	}
	if len(handlers) != len(agentapi.Routes) {
		panic("agent: a handler serves a route agentapi.Routes does not list")
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, errdefs.NotFound(wire.CodeRouteNotFound, "no route for %s %s", r.Method, r.URL.Path))
	})
	return recoverJSON(mux)
}

// recoverJSON turns a handler panic into a 500 for that request alone.
func recoverJSON(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			logf("panic in %s %s: %v\n%s", r.Method, r.URL.Path, v, debug.Stack())
			writeError(w, errdefs.Internal(fmt.Errorf("%v", v), "internal error"))
		}()
		h.ServeHTTP(w, r)
	})
}

func (s *server) handleHealth(w http.ResponseWriter, r *http.Request) {
	s.main.seen()                                               // the daemon knows the agent now (mainproc.go)
	writeJSON(w, http.StatusOK, agentapi.NewHello(os.Getpid())) // with the protocol version (agentapi/version.go)
}

func writeJSON(w http.ResponseWriter, status int, v any) { httpjson.Write(w, status, v) }

// answerJSON serves f: its value as JSON with 200, or its error.
func answerJSON[T any](f func(*http.Request) (T, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := f(r)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, v)
	}
}

func writeError(w http.ResponseWriter, err error) {
	if httpjson.WriteError(w, err) == errdefs.KindInternal {
		logf("%v", err)
	}
}

func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error { return httpjson.Decode(w, r, v) }

func logf(format string, args ...any) { log.Printf("agent: "+format, args...) }
