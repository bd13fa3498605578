package agent

import (
	"context"
	"io"
	"net/http"
	"os"
	"sync"
	"syscall"

	"github.com/sbxhq/sbx/internal/agent/lsp"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// The /lsp routes: language servers run by package lsp, started as the
// agent starts any process (in their own group, reaped here, stopped with
// the sandbox).

// lspState is the agent's language servers, made on first use.
type lspState struct {
	once sync.Once
	m    *lsp.Manager
}

func (s *server) lspServers() *lsp.Manager {
	s.lsp.once.Do(func() { s.lsp.m = lsp.NewManager(s.spawnLSP) })
	return s.lsp.m
}

// lspStderrTail bounds what is kept of a server's standard error.
const lspStderrTail = 4 << 10

// spawnLSP starts a language server with pipes on its stdin and stdout.
func (s *server) spawnLSP(language string, argv []string, dir string) (*lsp.Process, error) {
	if _, err := lookPath(argv[0], dir, os.Environ()); err != nil {
		return nil, errdefs.Invalid(wire.CodeLanguageNotAvailable, "no %s language server in this sandbox: its image has no %s (sbx's python image has pylsp for python)", language, argv[0])
	}
	c, err := s.prepare(&wire.ExecRequest{Cmd: argv, Cwd: dir})
	if err != nil {
		return nil, err
	}
	var pipes [6]*os.File // stdin r/w, stdout r/w, stderr r/w
	for i := 0; i < 6; i += 2 {
		if pipes[i], pipes[i+1], err = os.Pipe(); err != nil {
			for _, f := range pipes[:i] {
				f.Close()
			}
			return nil, errdefs.Internal(err, "pipe")
		}
	}
	proc, err := s.start(c, pipes[0], pipes[3], pipes[5])
	pipes[0].Close()
	pipes[3].Close()
	pipes[5].Close()
	if err != nil {
		pipes[1].Close()
		pipes[2].Close()
		pipes[4].Close()
		return nil, err
	}
	tail := &tailWriter{max: lspStderrTail}
	go io.Copy(tail, pipes[4])
	done := make(chan struct{})
	go func() {
		<-proc.done
		s.forgetGroup(proc.pid)
		close(done)
		pipes[1].Close()
		pipes[2].Close()
		pipes[4].Close()
	}()
	kill := func() {
		select {
		case <-done: // gone: its pid may be another's now
		default:
			syscall.Kill(-proc.pid, syscall.SIGKILL)
		}
	}
	return &lsp.Process{Pid: proc.pid, Stdin: pipes[1], Stdout: pipes[2], Done: done, Kill: kill, Stderr: tail.String}, nil
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// lspPaths resolves a request's project and file the way every path of the
// agent resolves (relative: from the workdir).
func (s *server) lspPaths(project, file string) (string, string, error) {
	p, err := s.path(project)
	if err != nil {
		return "", "", err
	}
	if file == "" {
		return p, "", nil
	}
	f, err := s.path(file)
	return p, f, err
}

func (s *server) lspStart(ctx context.Context, req wire.LSPServerRequest) (wire.LSPServer, error) {
	p, _, err := s.lspPaths(req.Project, "")
	if err != nil {
		return wire.LSPServer{}, err
	}
	return s.lspServers().Start(ctx, req.Language, p)
}

func (s *server) handleLSPStop(w http.ResponseWriter, r *http.Request) {
	var req wire.LSPServerRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	p, _, err := s.lspPaths(req.Project, "")
	if err == nil {
		err = s.lspServers().Stop(req.Language, p)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// lspDocumentHandler serves did-open and did-close: 204 when done.
func (s *server) lspDocumentHandler(op func(m *lsp.Manager, language, project, file string) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req wire.LSPDocumentRequest
		if err := decodeJSON(w, r, &req); err != nil {
			writeError(w, err)
			return
		}
		p, f, err := s.lspPaths(req.Project, req.Path)
		if err == nil {
			err = op(s.lspServers(), req.Language, p, f)
		}
		if err != nil {
			writeError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *server) lspDocumentSymbols(ctx context.Context, req wire.LSPDocumentRequest) ([]wire.LSPSymbol, error) {
	p, f, err := s.lspPaths(req.Project, req.Path)
	if err != nil {
		return nil, err
	}
	return s.lspServers().DocumentSymbols(ctx, req.Language, p, f)
}

func (s *server) lspWorkspaceSymbols(ctx context.Context, req wire.LSPWorkspaceSymbolsRequest) ([]wire.LSPSymbol, error) {
	p, _, err := s.lspPaths(req.Project, "")
	if err != nil {
		return nil, err
	}
	return s.lspServers().WorkspaceSymbols(ctx, req.Language, p, req.Query)
}

func (s *server) lspCompletions(ctx context.Context, req wire.LSPCompletionRequest) (wire.LSPCompletionList, error) {
	p, f, err := s.lspPaths(req.Project, req.Path)
	if err != nil {
		return wire.LSPCompletionList{}, err
	}
	return s.lspServers().Completions(ctx, req.Language, p, f, req.Position, req.TriggerCharacter)
}
