package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/sdk"
)

func TestRunCommand(t *testing.T) {
	mux := http.NewServeMux()
	var got sdk.RunRequest
	mux.HandleFunc("POST /v1/sandboxes/box/run", func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&got)
		w.Header().Set("Content-Type", "application/x-ndjson")
		enc := json.NewEncoder(w)
		enc.Encode(sdk.RunEvent{Type: "stdout", Data: []byte("out\n")})
		enc.Encode(sdk.RunEvent{Type: "result", Result: &sdk.CodeResult{PNG: []byte("png-bytes"), Text: "<Figure>"}})
		enc.Encode(sdk.RunEvent{Type: "result", Result: &sdk.CodeResult{Main: true, Text: "42", HTML: "<b>42</b>"}})
		switch got.Code {
		case "raise":
			enc.Encode(sdk.RunEvent{Type: "error", Error: &sdk.CodeError{Name: "ValueError", Value: "v", Traceback: "Traceback…\nValueError: v\n"}})
		case "slow":
			enc.Encode(sdk.RunEvent{Type: "end", TimedOut: true})
			return
		}
		enc.Encode(sdk.RunEvent{Type: "end"})
	})
	fakeDaemon(t, mux)

	dir := t.TempDir()
	r := runCLI(t, "", "run", "box", "--lang", "javascript", "-c", "ok", "--env", "A=1", "--save", dir)
	if r.code != 0 || r.stdout != "out\n42\n" || got.Language != "javascript" || got.Env["A"] != "1" {
		t.Fatalf("run: %+v (sent %+v)", r, got)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "result-1.png")); err != nil || string(b) != "png-bytes" {
		t.Fatalf("saved png: %q %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "result-2.html")); err != nil || string(b) != "<b>42</b>" {
		t.Fatalf("saved html: %q %v", b, err)
	}

	r = runCLI(t, "raise", "run", "box", "-")
	if r.code != 1 || got.Code != "raise" || got.Language != "python" || !strings.Contains(r.stderr, "ValueError: v") || !strings.Contains(r.stderr, "--save DIR") {
		t.Fatalf("error: %+v", r)
	}
	if r = runCLI(t, "", "run", "box", "-c", "slow", "--timeout", "1"); r.code != 124 || !strings.Contains(r.stderr, "timed out") {
		t.Fatalf("timeout: %+v", r)
	}
	file := filepath.Join(t.TempDir(), "code.py")
	os.WriteFile(file, []byte("from-file"), 0o644)
	if r = runCLI(t, "", "run", "box", file); r.code != 0 || got.Code != "from-file" {
		t.Fatalf("file: %+v %+v", r, got)
	}
	for _, args := range [][]string{{"run", "box"}, {"run", "box", file, "-c", "x"}, {"run", "box", "-c", "x", "--timeout", "-1"}} {
		if r = runCLI(t, "", args...); r.code != 1 || !strings.Contains(r.stderr, "--help") {
			t.Fatalf("%v: %+v", args, r)
		}
	}
}

func TestCtxCommands(t *testing.T) {
	mux := http.NewServeMux()
	var created sdk.CreateContextRequest
	mux.HandleFunc("POST /v1/sandboxes/box/contexts", func(w http.ResponseWriter, r *http.Request) {
		created = sdk.CreateContextRequest{}
		json.NewDecoder(r.Body).Decode(&created)
		reply(w, http.StatusCreated, sdk.Context{ID: "ctx-1", Language: created.Language})
	})
	mux.HandleFunc("GET /v1/sandboxes/box/contexts", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, []sdk.Context{{ID: "ctx-1", Language: "bash", Cwd: "/workspace"}})
	})
	mux.HandleFunc("DELETE /v1/sandboxes/box/contexts/ctx-1", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /v1/sandboxes/box/contexts/ctx-1/run", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, sdk.RunResult{Stdout: "hi\n", Results: []sdk.CodeResult{}})
	})
	mux.HandleFunc("POST /v1/sandboxes/box/contexts/gone/run", func(w http.ResponseWriter, r *http.Request) {
		replyErr(w, http.StatusNotFound, "CONTEXT_NOT_FOUND", "context gone")
	})
	fakeDaemon(t, mux)

	r := runCLI(t, "", "ctx", "create", "box", "--lang", "bash", "--idle", "0")
	if r.code != 0 || r.stdout != "ctx-1\n" || created.Language != "bash" || created.IdleSeconds == nil || *created.IdleSeconds != 0 {
		t.Fatalf("create: %+v (sent %+v)", r, created)
	}
	if r = runCLI(t, "", "ctx", "create", "box"); r.code != 0 || created.IdleSeconds != nil || created.Language != "python" {
		t.Fatalf("create with defaults: %+v (sent %+v)", r, created)
	}
	if r = runCLI(t, "", "ctx", "ls", "box"); r.code != 0 || !strings.Contains(r.stdout, "ctx-1") || !strings.Contains(r.stdout, "never") {
		t.Fatalf("ls: %+v", r)
	}
	if r = runCLI(t, "", "ctx", "run", "box", "ctx-1", "-c", "echo hi", "-o", "json"); r.code != 0 || !strings.Contains(r.stdout, `"stdout": "hi\n"`) {
		t.Fatalf("run -o json: %+v", r)
	}
	if r = runCLI(t, "", "ctx", "run", "box", "gone", "-c", "x"); r.code != 1 || !strings.Contains(r.stderr, "CONTEXT_NOT_FOUND") {
		t.Fatalf("run in a gone context: %+v", r)
	}
	if r = runCLI(t, "", "ctx", "rm", "box", "ctx-1"); r.code != 0 {
		t.Fatalf("rm: %+v", r)
	}
}
