// Package agent is the in-instance agent and the host's client for it.
//
// The sbx binary runs as PID 1 inside every instance (`sbx agent`). It starts
// every process itself, reaps zombies, and serves the toolbox (exec, files) as
// HTTP on a unix socket in a directory bind-mounted from the host, so the
// daemon can reach it and can reattach after a restart (DESIGN invariant 5).
//
// Run is the agent; Client is the daemon's view of one agent.
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

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/internal/runtime"
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

	contexts contextSet // code contexts (contexts.go)

	procs    processTable  // background processes (processes.go)
	sessions sessionTable  // persistent shells (sessions.go)
	ptys     ptyTable      // terminals (pty.go)
	quit     chan struct{} // closed at shutdown to end endless streams (stream.go)

	main mainState // the sandbox's main process (mainproc.go)
}

// Run serves the agent on cfg.Socket until it is shut down (POST /shutdown,
// SIGTERM or SIGINT, or ctx cancelled, which kills processes at once). It
// stops every process before returning nil.
func Run(ctx context.Context, cfg Config) error {
	if err := protectSelf(); err != nil { // before anything inside can run
		return err
	}
	if cfg.Socket == "" {
		cfg.Socket = filepath.Join(runtime.RunPath, runtime.AgentSock)
	}
	if cfg.DefaultCwd == "" {
		cfg.DefaultCwd = os.Getenv("SBX_WORKDIR")
	}
	if cfg.DefaultCwd == "" {
		cfg.DefaultCwd = "/workspace"
	}
	if !filepath.IsAbs(cfg.DefaultCwd) {
		return errdefs.Invalid("INVALID_WORKDIR", "working directory %q is not absolute", cfg.DefaultCwd)
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

func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.handleHealth)
	mux.HandleFunc("POST /exec", s.handleExec)
	mux.HandleFunc("PUT /files", s.handlePutFile)
	mux.HandleFunc("GET /files", s.handleGetFile)
	mux.HandleFunc("DELETE /files", s.handleDelete)
	mux.HandleFunc("GET /files/list", s.handleList)
	mux.HandleFunc("GET /files/stat", s.handleStat)
	mux.HandleFunc("POST /files/mkdir", s.handleMkdir)
	mux.HandleFunc("POST /files/move", s.handleMove)
	mux.HandleFunc("POST /shutdown", s.handleShutdown)
	mux.HandleFunc("POST /sync", s.handleSync)       // suspend.go
	mux.HandleFunc("POST /suspend", s.handleSuspend) // suspend.go
	mux.HandleFunc("POST /contexts", s.handleCreateContext)
	mux.HandleFunc("GET /contexts", s.handleListContexts)
	mux.HandleFunc("GET /contexts/{cid}", s.handleGetContext)
	mux.HandleFunc("DELETE /contexts/{cid}", s.handleDeleteContext)
	mux.HandleFunc("POST /contexts/{cid}/run", s.handleRunContext)
	mux.HandleFunc("POST /run", s.handleRun)
	mux.HandleFunc("POST /processes", s.handleStartProcess)
	mux.HandleFunc("GET /processes", s.handleListProcesses)
	mux.HandleFunc("GET /processes/{process}", s.withProcess(s.handleGetProcess))
	mux.HandleFunc("DELETE /processes/{process}", s.withProcess(s.handleDeleteProcess))
	mux.HandleFunc("GET /processes/{process}/logs", s.withProcess(s.handleProcessLogs))
	mux.HandleFunc("POST /processes/{process}/stdin", s.withProcess(s.handleWriteStdin))
	mux.HandleFunc("POST /processes/{process}/stdin/close", s.withProcess(s.handleCloseStdin))
	mux.HandleFunc("POST /processes/{process}/signal", s.withProcess(s.handleSignalProcess))
	mux.HandleFunc("POST /processes/{process}/wait", s.withProcess(s.handleWaitProcess))
	mux.HandleFunc("POST /processes/{process}/wait-for-log", s.withProcess(s.handleWaitForLog))
	mux.HandleFunc("POST /processes/{process}/wait-for-port", s.withProcess(s.handleWaitForPort))
	mux.HandleFunc("POST /sessions", s.handleCreateSession)
	mux.HandleFunc("GET /sessions", s.handleListSessions)
	mux.HandleFunc("GET /sessions/{session}", s.withSession(s.handleGetSession))
	mux.HandleFunc("DELETE /sessions/{session}", s.withSession(s.handleDeleteSession))
	mux.HandleFunc("POST /sessions/{session}/exec", s.withSession(s.handleSessionExec))
	mux.HandleFunc("POST /ptys", s.handleCreatePTY)
	mux.HandleFunc("GET /ptys", s.handleListPTYs)
	mux.HandleFunc("GET /ptys/{pty}", s.withPTY(s.handleGetPTY))
	mux.HandleFunc("DELETE /ptys/{pty}", s.withPTY(s.handleDeletePTY))
	mux.HandleFunc("POST /ptys/{pty}/resize", s.withPTY(s.handleResizePTY))
	mux.HandleFunc("GET /ptys/{pty}/attach", s.withPTY(s.handleAttachPTY))
	mux.HandleFunc("GET /watch", s.handleWatch)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, errdefs.NotFound("ROUTE_NOT_FOUND", "no route for %s %s", r.Method, r.URL.Path))
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
	s.main.seen() // the daemon knows the agent now (mainproc.go)
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "pid": os.Getpid()})
}

func writeJSON(w http.ResponseWriter, status int, v any) { httpjson.Write(w, status, v) }

func writeError(w http.ResponseWriter, err error) {
	if httpjson.WriteError(w, err) == errdefs.KindInternal {
		logf("%v", err)
	}
}

func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error { return httpjson.Decode(w, r, v) }

func logf(format string, args ...any) { log.Printf("agent: "+format, args...) }
