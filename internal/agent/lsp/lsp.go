// Package lsp is the agent's bridge to language servers: it starts one per
// language and project directory in the sandbox, speaks LSP (JSON-RPC over
// the server's stdin and stdout) to it, tracks which documents are open on
// it, and answers symbols and completions in sdk's shapes. The agent serves
// it on its /lsp routes (internal/agent/lsp_routes.go).
//
// Memory is bounded: at most maxServers servers, maxDocuments open
// documents each (the agent keeps their names, not their text), files of
// at most maxFile bytes, messages of at most maxMessage bytes (rpc.go) and
// maxItems completions or symbols per answer.
package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

const (
	maxServers   = 8
	maxDocuments = 256
	maxFile      = 4 << 20
	maxItems     = 1000
	// initWait bounds a server's start (initialize); callWait each request.
	initWait = 60 * time.Second
	callWait = 60 * time.Second
	stopWait = 3 * time.Second
)

// programs is the language server each language runs, and what it is
// called by in errors.
var programs = map[string][]string{
	"python":     {"pylsp"},
	"typescript": {"typescript-language-server", "--stdio"},
	"javascript": {"typescript-language-server", "--stdio"},
}

// Process is a started language server.
type Process struct {
	Pid    int
	Stdin  io.WriteCloser
	Stdout io.Reader
	// Done is closed when the process has exited.
	Done <-chan struct{}
	// Kill ends the process (and its group) at once.
	Kill func()
	// Stderr is the end of what it wrote to its standard error, for errors.
	Stderr func() string
}

// Spawner starts argv, the server of language, with its working directory
// dir. It answers 400 LANGUAGE_NOT_AVAILABLE itself when argv[0] is missing.
type Spawner func(language string, argv []string, dir string) (*Process, error)

// Manager holds the running servers.
type Manager struct {
	spawn Spawner

	mu       sync.Mutex
	servers  map[key]*server
	starting map[key]chan struct{} // closed when that start ends
}

type key struct{ language, project string }

// server is one running language server.
type server struct {
	key
	proc    *Process
	conn    *conn
	program string
	// workspaceSymbols: the server answers workspace/symbol itself;
	// without it the agent searches the open documents' symbols.
	workspaceSymbols bool

	mu   sync.Mutex
	docs map[string]int // open document URI → version
}

// NewManager returns a Manager that starts servers with spawn.
func NewManager(spawn Spawner) *Manager {
	return &Manager{spawn: spawn, servers: map[key]*server{}, starting: map[key]chan struct{}{}}
}

// checkLanguage refuses a language without a server.
func checkLanguage(language string) error {
	if _, ok := programs[language]; !ok {
		return errdefs.Invalid(wire.CodeUnknownLanguage, "no language server for language %q: use one of python, typescript, javascript", language)
	}
	return nil
}

// Start starts the server for language and project (absolute), or answers
// the one that runs.
func (m *Manager) Start(ctx context.Context, language, project string) (wire.LSPServer, error) {
	if err := checkLanguage(language); err != nil {
		return wire.LSPServer{}, err
	}
	if fi, err := os.Stat(project); err != nil || !fi.IsDir() {
		return wire.LSPServer{}, errdefs.Invalid(wire.CodePathNotFound, "project directory %s does not exist or is not a directory", project)
	}
	k := key{language, project}
	m.mu.Lock()
	// One start per key at a time, without holding the lock while a
	// server initializes (other servers keep answering).
	for m.starting[k] != nil {
		ch := m.starting[k]
		m.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return wire.LSPServer{}, ctx.Err()
		}
		m.mu.Lock()
	}
	if s := m.servers[k]; s != nil {
		if !s.exited() {
			m.mu.Unlock()
			return s.describe(), nil
		}
		delete(m.servers, k)
	}
	if len(m.servers)+len(m.starting) >= maxServers {
		m.mu.Unlock()
		return wire.LSPServer{}, errdefs.Conflict(wire.CodeLSPLimit, "%d language servers run already: stop one first", maxServers)
	}
	started := make(chan struct{})
	m.starting[k] = started
	m.mu.Unlock()

	s, err := m.startServer(ctx, k)
	m.mu.Lock()
	delete(m.starting, k)
	close(started)
	if err == nil {
		m.servers[k] = s
	}
	m.mu.Unlock()
	if err != nil {
		return wire.LSPServer{}, err
	}
	return s.describe(), nil
}

// startServer spawns and initializes the server of k.
func (m *Manager) startServer(ctx context.Context, k key) (*server, error) {
	argv := programs[k.language]
	proc, err := m.spawn(k.language, argv, k.project)
	if err != nil {
		return nil, err
	}
	s := &server{key: k, proc: proc, program: argv[0], docs: map[string]int{}}
	s.conn = newConn(proc.Stdout, proc.Stdin)
	ictx, cancel := context.WithTimeout(ctx, initWait)
	defer cancel()
	if err := s.initialize(ictx); err != nil {
		proc.Kill()
		return nil, s.failed("start", err)
	}
	return s, nil
}

func (s *server) initialize(ctx context.Context) error {
	root := fileURI(s.project)
	params := map[string]any{
		"processId": os.Getpid(),
		"rootUri":   root,
		"rootPath":  s.project,
		"workspaceFolders": []map[string]string{
			{"uri": root, "name": filepath.Base(s.project)},
		},
		"capabilities": map[string]any{
			"textDocument": map[string]any{
				"synchronization": map[string]any{"didSave": false},
				"documentSymbol":  map[string]any{"hierarchicalDocumentSymbolSupport": false},
				"completion": map[string]any{
					"completionItem": map[string]any{"snippetSupport": false, "documentationFormat": []string{"markdown", "plaintext"}},
				},
			},
			"workspace": map[string]any{"symbol": map[string]any{}, "workspaceFolders": true, "configuration": true},
		},
	}
	var res struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	if err := s.conn.call(ctx, "initialize", params, &res); err != nil {
		return err
	}
	if v, ok := res.Capabilities["workspaceSymbolProvider"]; ok && string(v) != "false" && string(v) != "null" {
		s.workspaceSymbols = true
	}
	return s.conn.notify("initialized", map[string]any{})
}

func (s *server) exited() bool {
	select {
	case <-s.proc.Done:
		return true
	case <-s.conn.done:
		return true
	default:
		return false
	}
}

func (s *server) describe() wire.LSPServer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return wire.LSPServer{Language: s.language, Project: s.project, Program: s.program, Pid: s.proc.Pid, OpenDocuments: len(s.docs)}
}

// failed is the error of an operation the server did not do: LSP_FAILED
// with what it said on its standard error, or the caller's cancellation.
func (s *server) failed(op string, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return errdefs.Unavailable(wire.CodeLSPFailed, "%s: %s for %s did not answer in time", op, s.program, s.project)
	}
	msg := fmt.Sprintf("%s: %s for %s: %v", op, s.program, s.project, err)
	if tail := strings.TrimSpace(s.proc.Stderr()); tail != "" && s.exited() {
		msg += "; its last output: " + tail
	}
	return errdefs.Unavailable(wire.CodeLSPFailed, "%s", msg)
}

// Stop ends the server of language and project.
func (m *Manager) Stop(language, project string) error {
	if err := checkLanguage(language); err != nil {
		return err
	}
	m.mu.Lock()
	s := m.servers[key{language, project}]
	delete(m.servers, key{language, project})
	m.mu.Unlock()
	if s == nil {
		return notStarted(language, project)
	}
	s.stop()
	return nil
}

// stop asks the server to shut down and exit, and kills it if it does not.
func (s *server) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), stopWait)
	defer cancel()
	if s.conn.call(ctx, "shutdown", nil, nil) == nil {
		s.conn.notify("exit", nil)
	}
	s.proc.Stdin.Close()
	select {
	case <-s.proc.Done:
	case <-ctx.Done():
	}
	s.proc.Kill()
}

func notStarted(language, project string) error {
	return errdefs.Conflict(wire.CodeLSPNotStarted, "no %s language server runs for %s: start it first (lsp/start)", language, project)
}

// get returns the running server of language and project.
func (m *Manager) get(language, project string) (*server, error) {
	if err := checkLanguage(language); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.servers[key{language, project}]
	if s == nil {
		return nil, notStarted(language, project)
	}
	if s.exited() {
		delete(m.servers, s.key)
		err := s.conn.closedErr()
		if err == nil {
			err = errors.New("it exited")
		}
		return nil, s.failed("the server stopped; start it again", err)
	}
	return s, nil
}

// document checks that file is a file of the server's project and answers
// its URI.
func (s *server) document(file string) (string, error) {
	rel, err := filepath.Rel(s.project, file)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", errdefs.Invalid(wire.CodeInvalidPath, "%s is outside the project %s", file, s.project)
	}
	return fileURI(file), nil
}

// doc returns the running server of language and project, and the URI of
// file, one of the project's files.
func (m *Manager) doc(language, project, file string) (*server, string, error) {
	s, err := m.get(language, project)
	if err != nil {
		return nil, "", err
	}
	uri, err := s.document(file)
	if err != nil {
		return nil, "", err
	}
	return s, uri, nil
}

// DidOpen opens file (absolute) on the server: its text is read from disk
// and sent; opening an open document sends its text again.
func (m *Manager) DidOpen(language, project, file string) error {
	s, uri, err := m.doc(language, project, file)
	if err != nil {
		return err
	}
	text, err := readFile(file)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	version, open := s.docs[uri]
	if !open && len(s.docs) >= maxDocuments {
		return errdefs.Conflict(wire.CodeLSPLimit, "%d documents are open on this server: close one first (lsp/did-close)", maxDocuments)
	}
	if open { // send the text as it is now
		if err := s.conn.notify("textDocument/didClose", map[string]any{"textDocument": map[string]string{"uri": uri}}); err != nil {
			return s.failed("did-open", err)
		}
	}
	version++
	err = s.conn.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": languageID(language, file), "version": version, "text": text,
	}})
	if err != nil {
		return s.failed("did-open", err)
	}
	s.docs[uri] = version
	return nil
}

// DidClose closes file on the server; closing a document that is not open
// is a no-op.
func (m *Manager) DidClose(language, project, file string) error {
	s, uri, err := m.doc(language, project, file)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, open := s.docs[uri]; !open {
		return nil
	}
	delete(s.docs, uri)
	if err := s.conn.notify("textDocument/didClose", map[string]any{"textDocument": map[string]string{"uri": uri}}); err != nil {
		return s.failed("did-close", err)
	}
	return nil
}

func readFile(file string) (string, error) {
	f, err := os.Open(file)
	if errors.Is(err, os.ErrNotExist) {
		return "", errdefs.NotFound(wire.CodeFileNotFound, "no file %s", file)
	} else if err != nil {
		return "", errdefs.Invalid(wire.CodeInvalidPath, "open %s: %v", file, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", errdefs.Invalid(wire.CodeNotARegularFile, "%s is not a regular file", file)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return "", errdefs.Invalid(wire.CodeInvalidPath, "read %s: %v", file, err)
	}
	if len(b) > maxFile {
		return "", errdefs.TooLarge(wire.CodeBodyTooLarge, "%s is larger than %d bytes, the bound for a document", file, maxFile)
	}
	return string(b), nil
}

// languageID is LSP's language id of a file: a .js file on the typescript
// server is javascript, and so on.
func languageID(language, file string) string {
	switch filepath.Ext(file) {
	case ".ts", ".mts", ".cts":
		return "typescript"
	case ".tsx":
		return "typescriptreact"
	case ".js", ".mjs", ".cjs":
		return "javascript"
	case ".jsx":
		return "javascriptreact"
	case ".py", ".pyi":
		return "python"
	}
	return language
}

// DocumentSymbols answers the symbols of file.
func (m *Manager) DocumentSymbols(ctx context.Context, language, project, file string) ([]wire.LSPSymbol, error) {
	s, uri, err := m.doc(language, project, file)
	if err != nil {
		return nil, err
	}
	syms, err := s.documentSymbols(ctx, uri)
	if err != nil {
		return nil, s.failed("document-symbols", err)
	}
	return syms, nil
}

func (s *server) documentSymbols(ctx context.Context, uri string) ([]wire.LSPSymbol, error) {
	ctx, cancel := context.WithTimeout(ctx, callWait)
	defer cancel()
	var raw []json.RawMessage
	if err := s.conn.call(ctx, "textDocument/documentSymbol", map[string]any{"textDocument": map[string]string{"uri": uri}}, &raw); err != nil {
		return nil, err
	}
	out := []wire.LSPSymbol{}
	for _, r := range raw {
		flatten(&out, uri, "", r)
	}
	return out, nil
}

// lspSymbol is either of LSP's symbol shapes: SymbolInformation (location)
// or DocumentSymbol (range, children).
type lspSymbol struct {
	Name     string `json:"name"`
	Kind     int    `json:"kind"`
	Location *struct {
		URI   string        `json:"uri"`
		Range wire.LSPRange `json:"range"`
	} `json:"location"`
	Range     *wire.LSPRange    `json:"range"`
	Container string            `json:"containerName"`
	Children  []json.RawMessage `json:"children"`
}

// flatten appends the symbol r (and its children) to out.
func flatten(out *[]wire.LSPSymbol, uri, container string, r json.RawMessage) {
	if len(*out) >= maxItems {
		return
	}
	var x lspSymbol
	if json.Unmarshal(r, &x) != nil || x.Name == "" {
		return
	}
	sym := wire.LSPSymbol{Name: x.Name, Kind: x.Kind, URI: uri, Container: x.Container}
	switch {
	case x.Location != nil:
		sym.URI, sym.Range = x.Location.URI, x.Location.Range
	case x.Range != nil:
		sym.Range = *x.Range
		sym.Container = container
	}
	*out = append(*out, sym)
	for _, c := range x.Children {
		flatten(out, uri, x.Name, c)
	}
}

// WorkspaceSymbols answers the symbols of the project whose name contains
// query. A server without workspace/symbol (pylsp) is asked for the
// symbols of each open document instead.
func (m *Manager) WorkspaceSymbols(ctx context.Context, language, project, query string) ([]wire.LSPSymbol, error) {
	s, err := m.get(language, project)
	if err != nil {
		return nil, err
	}
	var out []wire.LSPSymbol
	if s.workspaceSymbols {
		cctx, cancel := context.WithTimeout(ctx, callWait)
		defer cancel()
		var raw []json.RawMessage
		if err := s.conn.call(cctx, "workspace/symbol", map[string]string{"query": query}, &raw); err != nil {
			return nil, s.failed("workspace-symbols", err)
		}
		for _, r := range raw {
			flatten(&out, "", "", r)
		}
	} else {
		s.mu.Lock()
		uris := make([]string, 0, len(s.docs))
		for uri := range s.docs {
			uris = append(uris, uri)
		}
		s.mu.Unlock()
		slices.Sort(uris)
		for _, uri := range uris {
			syms, err := s.documentSymbols(ctx, uri)
			if err != nil {
				return nil, s.failed("workspace-symbols", err)
			}
			out = append(out, syms...)
		}
	}
	q := strings.ToLower(query)
	matched := []wire.LSPSymbol{}
	for _, sym := range out {
		if strings.Contains(strings.ToLower(sym.Name), q) && len(matched) < maxItems {
			matched = append(matched, sym)
		}
	}
	return matched, nil
}

// Completions answers the completions at a position of file.
func (m *Manager) Completions(ctx context.Context, language, project, file string, pos wire.LSPPosition, trigger string) (wire.LSPCompletionList, error) {
	s, uri, err := m.doc(language, project, file)
	if err != nil {
		return wire.LSPCompletionList{}, err
	}
	if pos.Line < 0 || pos.Character < 0 {
		return wire.LSPCompletionList{}, errdefs.Invalid(wire.CodeInvalidParameter, "position line and character must not be negative")
	}
	ctx, cancel := context.WithTimeout(ctx, callWait)
	defer cancel()
	var raw json.RawMessage
	cc := map[string]any{"triggerKind": 1} // invoked
	if trigger != "" {
		cc = map[string]any{"triggerKind": 2, "triggerCharacter": trigger}
	}
	params := map[string]any{"textDocument": map[string]string{"uri": uri}, "position": pos, "context": cc}
	if err := s.conn.call(ctx, "textDocument/completion", params, &raw); err != nil {
		return wire.LSPCompletionList{}, s.failed("completions", err)
	}
	// CompletionItem[] or CompletionList.
	var list struct {
		IsIncomplete bool              `json:"isIncomplete"`
		Items        []json.RawMessage `json:"items"`
	}
	if json.Unmarshal(raw, &list.Items) != nil {
		json.Unmarshal(raw, &list)
	}
	out := wire.LSPCompletionList{Incomplete: list.IsIncomplete, Items: []wire.LSPCompletionItem{}}
	for _, r := range list.Items {
		if len(out.Items) == maxItems {
			out.Incomplete = true
			break
		}
		var it struct {
			Label         string          `json:"label"`
			Kind          int             `json:"kind"`
			Detail        string          `json:"detail"`
			Documentation json.RawMessage `json:"documentation"`
			InsertText    string          `json:"insertText"`
			SortText      string          `json:"sortText"`
			FilterText    string          `json:"filterText"`
		}
		if json.Unmarshal(r, &it) != nil || it.Label == "" {
			continue
		}
		out.Items = append(out.Items, wire.LSPCompletionItem{Label: it.Label, Kind: it.Kind, Detail: it.Detail,
			Documentation: documentation(it.Documentation), InsertText: it.InsertText, SortText: it.SortText, FilterText: it.FilterText})
	}
	return out, nil
}

// documentation is the text of a string or MarkupContent.
func documentation(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var mc struct {
		Value string `json:"value"`
	}
	json.Unmarshal(raw, &mc)
	return mc.Value
}

// fileURI is the file:// URI of an absolute path.
func fileURI(p string) string {
	return (&url.URL{Scheme: "file", Path: p}).String()
}
