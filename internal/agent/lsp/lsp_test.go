package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/textproto"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// fakeServer is a language server in a goroutine: it asks the client a
// question of its own before answering initialize (as servers do), answers
// documentSymbol for open documents with hierarchical symbols, and has no
// workspace/symbol.
type fakeServer struct {
	mu     sync.Mutex
	opened map[string]string // uri → text
	got    []string          // methods received
}

func (f *fakeServer) run(in io.Reader, out io.Writer, done chan struct{}) {
	defer close(done)
	r := bufio.NewReader(in)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(out, "Content-Length: %d\r\n\r\n%s", len(b), b)
	}
	for {
		h, err := textproto.NewReader(r).ReadMIMEHeader()
		if err != nil {
			return
		}
		n, _ := strconv.Atoi(h.Get("Content-Length"))
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		json.Unmarshal(body, &m)
		f.mu.Lock()
		if m.Method != "" {
			f.got = append(f.got, m.Method)
		} else {
			f.got = append(f.got, "answer:"+string(m.Result))
		}
		f.mu.Unlock()
		var p struct {
			TextDocument struct{ URI, Text string } `json:"textDocument"`
		}
		json.Unmarshal(m.Params, &p)
		switch m.Method {
		case "initialize":
			send(map[string]any{"jsonrpc": "2.0", "id": 99, "method": "workspace/configuration", "params": map[string]any{"items": []any{1, 2}}})
			send(map[string]any{"jsonrpc": "2.0", "method": "window/logMessage", "params": map[string]any{"message": "hi"}})
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"capabilities": map[string]any{}}})
		case "textDocument/didOpen":
			f.mu.Lock()
			f.opened[p.TextDocument.URI] = p.TextDocument.Text
			f.mu.Unlock()
		case "textDocument/didClose":
			f.mu.Lock()
			delete(f.opened, p.TextDocument.URI)
			f.mu.Unlock()
		case "textDocument/documentSymbol":
			var syms []any
			f.mu.Lock()
			for _, line := range strings.Split(f.opened[p.TextDocument.URI], "\n") {
				if name, ok := strings.CutPrefix(line, "class "); ok {
					r := map[string]any{"start": map[string]int{"line": 0, "character": 0}, "end": map[string]int{"line": 1, "character": 0}}
					syms = append(syms, map[string]any{"name": name, "kind": 5, "range": r, "selectionRange": r,
						"children": []any{map[string]any{"name": "method_of_" + name, "kind": 6, "range": r, "selectionRange": r}}})
				}
			}
			f.mu.Unlock()
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": syms})
		case "textDocument/completion":
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": []any{
				map[string]any{"label": "path", "kind": 9, "documentation": map[string]string{"kind": "markdown", "value": "*os.path*"}},
				map[string]any{"label": "pardir", "kind": 6, "documentation": "plain"},
			}})
		case "shutdown":
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": nil})
		case "exit":
			return
		}
	}
}

func newFake(t *testing.T) (*Manager, *fakeServer) {
	f := &fakeServer{opened: map[string]string{}}
	spawn := func(language string, argv []string, dir string) (*Process, error) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan struct{})
		go func() { f.run(inR, outW, done); outW.Close() }()
		return &Process{Pid: 1, Stdin: inW, Stdout: outR, Done: done, Kill: func() { inR.Close() }, Stderr: func() string { return "" }}, nil
	}
	return NewManager(spawn), f
}

func wantCode(t *testing.T, err error, code wire.Code) {
	t.Helper()
	if errdefs.CodeOf(err) != code {
		t.Fatalf("got %v, want %s", err, code)
	}
}

func TestManager(t *testing.T) {
	ctx := context.Background()
	m, f := newFake(t)
	project := t.TempDir()
	file := filepath.Join(project, "a.py")
	os.WriteFile(file, []byte("class Alpha\nclass Beta\n"), 0o644)

	_, err := m.Start(ctx, "cobol", project)
	wantCode(t, err, wire.CodeUnknownLanguage)
	wantCode(t, m.DidOpen("python", project, file), wire.CodeLSPNotStarted)
	if _, err := m.Start(ctx, "python", project); err != nil {
		t.Fatal(err)
	}
	wantCode(t, m.DidOpen("python", project, filepath.Join(project, "..", "x.py")), wire.CodeInvalidPath)
	wantCode(t, m.DidOpen("python", project, filepath.Join(project, "missing.py")), wire.CodeFileNotFound)
	if err := m.DidOpen("python", project, file); err != nil {
		t.Fatal(err)
	}
	syms, err := m.DocumentSymbols(ctx, "python", project, file)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range syms {
		names = append(names, s.Name+"<"+s.Container)
		if s.URI != "file://"+file {
			t.Errorf("symbol %s in %s", s.Name, s.URI)
		}
	}
	if got := strings.Join(names, ","); got != "Alpha<,method_of_Alpha<Alpha,Beta<,method_of_Beta<Beta" {
		t.Errorf("symbols %s", got)
	}
	// No workspace/symbol: the open documents are searched.
	ws, err := m.WorkspaceSymbols(ctx, "python", project, "BET")
	if err != nil || len(ws) != 2 || ws[0].Name != "Beta" {
		t.Fatalf("workspace symbols %v %v", ws, err)
	}
	list, err := m.Completions(ctx, "python", project, file, wire.LSPPosition{Line: 0, Character: 1}, "")
	if err != nil || len(list.Items) != 2 || list.Items[0].Documentation != "*os.path*" || list.Items[1].Documentation != "plain" {
		t.Fatalf("completions %+v %v", list, err)
	}
	if err := m.DidClose("python", project, file); err != nil {
		t.Fatal(err)
	}
	if ws, _ := m.WorkspaceSymbols(ctx, "python", project, ""); len(ws) != 0 {
		t.Errorf("symbols after close: %v", ws)
	}
	if err := m.Stop("python", project); err != nil {
		t.Fatal(err)
	}
	wantCode(t, m.Stop("python", project), wire.CodeLSPNotStarted)

	f.mu.Lock()
	defer f.mu.Unlock()
	// The server's own request was answered: one null per item asked.
	if !strings.Contains(strings.Join(f.got, " "), "answer:[null,null]") {
		t.Errorf("the server's workspace/configuration was not answered: %v", f.got)
	}
	if f.got[len(f.got)-1] != "exit" {
		t.Errorf("stop did not end with exit: %v", f.got)
	}
}
