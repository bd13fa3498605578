package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sbxhq/sbx/wire"
)

// These tests run real interpreters from the host's PATH (python3, node,
// bash); a language whose interpreter is missing is skipped.

func init() {
	// A version manager's shim (pyenv's python3 is a shell script) adds
	// a second to every interpreter start; prefer the system's.
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		os.Setenv("PATH", "/usr/bin:/bin:"+os.Getenv("PATH"))
	}
}

func needInterpreter(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := lookPath(n, "/", os.Environ()); err == nil {
			return
		}
	}
	t.Skipf("%s not installed on this host", strings.Join(names, " or "))
}

func (a *testAgent) newContext(req wire.CreateContextRequest) wire.Context {
	a.t.Helper()
	var c wire.Context
	a.call("POST", "/contexts", req, http.StatusCreated, &c)
	if c.ID == "" || c.Pid == 0 || c.Language != req.Language {
		a.t.Fatalf("created context %+v", c)
	}
	return c
}

func (a *testAgent) runIn(cid string, req wire.RunCodeRequest) wire.RunResult {
	a.t.Helper()
	var res wire.RunResult
	a.call("POST", "/contexts/"+cid+"/run", req, http.StatusOK, &res)
	return res
}

// mainText returns the text/plain of the run's main result, or "".
func mainText(res wire.RunResult) string {
	for _, r := range res.Results {
		if r.Main {
			return r.Text
		}
	}
	return ""
}

func TestContextPythonState(t *testing.T) {
	t.Parallel()
	needInterpreter(t, "python3")
	a := startAgent(t)
	c := a.newContext(wire.CreateContextRequest{Language: "python"})

	res := a.runIn(c.ID, wire.RunCodeRequest{Code: "x = 41\nimport os\ndef inc(v):\n    return v + 1\n"})
	if res.Error != nil || len(res.Results) != 0 || res.TimedOut {
		t.Fatalf("define: %+v", res)
	}
	res = a.runIn(c.ID, wire.RunCodeRequest{Code: "print('hi')\ninc(x)"})
	if mainText(res) != "42" || res.Stdout != "hi\n" || res.Error != nil {
		t.Fatalf("x + 1: %+v", res)
	}
	// The working directory persists too.
	res = a.runIn(c.ID, wire.RunCodeRequest{Code: "os.makedirs('sub', exist_ok=True); os.chdir('sub')"})
	res = a.runIn(c.ID, wire.RunCodeRequest{Code: "os.getcwd()"})
	if want := fmt.Sprintf("%q", filepath.Join(a.cwd, "sub")); strings.ReplaceAll(mainText(res), "'", `"`) != want {
		t.Fatalf("cwd: %+v, want %s", res, want)
	}

	other := a.newContext(wire.CreateContextRequest{Language: "python"})
	res = a.runIn(other.ID, wire.RunCodeRequest{Code: "x"})
	if res.Error == nil || res.Error.Name != "NameError" || !strings.Contains(res.Error.Traceback, "NameError") {
		t.Fatalf("x in another context: %+v", res)
	}
	// The driver's own frames are not in the traceback.
	if strings.Contains(res.Error.Traceback, "_sbx_driver") || strings.Contains(res.Error.Traceback, "<string>") {
		t.Fatalf("driver frames in traceback:\n%s", res.Error.Traceback)
	}

	var list []wire.Context
	a.call("GET", "/contexts", nil, http.StatusOK, &list)
	if len(list) != 2 || list[0].ID != c.ID || list[1].ID != other.ID {
		t.Fatalf("list: %+v", list)
	}
	if list[0].ExpiresAt == nil || list[0].IdleSeconds != 86400 {
		t.Fatalf("default idle: %+v", list[0])
	}
	a.call("DELETE", "/contexts/"+other.ID, nil, http.StatusNoContent, nil)
	waitGone(t, other.Pid)
	a.callErr("POST", "/contexts/"+other.ID+"/run", wire.RunCodeRequest{Code: "1"}, http.StatusNotFound, "CONTEXT_NOT_FOUND")
	a.call("GET", "/contexts", nil, http.StatusOK, &list)
	if len(list) != 1 {
		t.Fatalf("list after delete: %+v", list)
	}
}

func TestContextPythonRichResults(t *testing.T) {
	t.Parallel()
	needInterpreter(t, "python3")
	a := startAgent(t)
	c := a.newContext(wire.CreateContextRequest{Language: "python"})
	res := a.runIn(c.ID, wire.RunCodeRequest{Code: `
class Table:
    def _repr_html_(self):
        return "<table><tr><td>1</td></tr></table>"
    def __repr__(self):
        return "Table()"
display(Table())
{"a": [1, 2], "b": None}
`})
	if res.Error != nil || len(res.Results) != 2 {
		t.Fatalf("results: %+v", res)
	}
	if r := res.Results[0]; r.Main || r.HTML != "<table><tr><td>1</td></tr></table>" || r.Text != "Table()" {
		t.Fatalf("display: %+v", r)
	}
	if r := res.Results[1]; !r.Main || string(r.JSON) != `{"a":[1,2],"b":null}` || r.Text != "{'a': [1, 2], 'b': None}" {
		t.Fatalf("main: %+v (json %s)", r, r.JSON)
	}
	// A syntax error is an error result, not a broken context.
	res = a.runIn(c.ID, wire.RunCodeRequest{Code: "def ("})
	if res.Error == nil || res.Error.Name != "SyntaxError" {
		t.Fatalf("syntax error: %+v", res)
	}
	// sys.exit is reported, and the context survives it.
	res = a.runIn(c.ID, wire.RunCodeRequest{Code: "import sys; sys.exit(3)"})
	if res.Error == nil || res.Error.Name != "SystemExit" {
		t.Fatalf("sys.exit: %+v", res)
	}
	res = a.runIn(c.ID, wire.RunCodeRequest{Code: "import asyncio\nawait asyncio.sleep(0)\nasync def f():\n    return 6 * 7\nawait f()"})
	if mainText(res) != "42" {
		t.Fatalf("top-level await: %+v", res)
	}
	res = a.runIn(c.ID, wire.RunCodeRequest{Code: "import os\nos.environ.get('RUNVAR')", Env: map[string]string{"RUNVAR": "v1"}})
	if mainText(res) != "'v1'" {
		t.Fatalf("run env: %+v", res)
	}
	res = a.runIn(c.ID, wire.RunCodeRequest{Code: "os.environ.get('RUNVAR')"})
	if len(res.Results) != 0 { // None: no result
		t.Fatalf("run env leaked into the next run: %+v", res)
	}
}

// jsonString is s as it comes back from a JSON string (invalid UTF-8
// replaced), the way a non-streamed result carries output.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	var out string
	json.Unmarshal(b, &out)
	return out
}

// protocolNoise is output that looks like the drivers' frames and the bash
// status line, plus every byte value.
func protocolNoise() string {
	var b strings.Builder
	b.WriteString(`{"type":"done","seq":1}` + "\n" + `{"type":"result","seq":2,"main":true,"data":{"text/plain":"forged"}}` + "\n")
	b.WriteString(`{"type":"ready"}` + "\n" + `builtin printf '{"type":"done","seq":3,"exitCode":0}\n'` + "\n")
	for i := 0; i < 256; i++ {
		b.WriteByte(byte(i))
	}
	return b.String()
}

func TestContextOutputCannotForgeFrames(t *testing.T) {
	t.Parallel()
	needInterpreter(t, "python3")
	a := startAgent(t)
	noise := protocolNoise()
	if err := os.WriteFile(filepath.Join(a.cwd, "noise"), []byte(noise), 0o644); err != nil {
		t.Fatal(err)
	}
	c := a.newContext(wire.CreateContextRequest{Language: "python"})
	for i := 0; i < 3; i++ {
		// Through print, straight to fds 1 and 2, and from a subprocess.
		res := a.runIn(c.ID, wire.RunCodeRequest{Code: `
import os, subprocess, sys
noise = open("noise", "rb").read()
sys.stdout.write('{"type":"done","seq":%d}\n' % 99)
sys.stdout.flush()
os.write(1, noise)
os.write(2, noise)
subprocess.run(["cat", "noise"], check=True)
21 * 2`})
		wantOut := jsonString(`{"type":"done","seq":99}` + "\n" + noise + noise)
		if res.Error != nil || mainText(res) != "42" || len(res.Results) != 1 {
			t.Fatalf("run %d: %+v", i, res)
		}
		if res.Stdout != wantOut || res.Stderr != jsonString(noise) {
			t.Fatalf("run %d: stdout %q\nwant %q\nstderr %q", i, res.Stdout, wantOut, res.Stderr)
		}
	}
	// The exact bytes, through a stream.
	ev := a.runStream(context.Background(), "/contexts/"+c.ID+"/run", wire.RunCodeRequest{Code: `import os; os.write(1, open("noise", "rb").read()); "end"`})
	if ev.stdout != noise || mainText(ev.res) != "'end'" || ev.res.Error != nil {
		t.Fatalf("stream: stdout %q, res %+v", ev.stdout, ev.res)
	}
}

func TestContextPythonTimeout(t *testing.T) {
	t.Parallel()
	needInterpreter(t, "python3")
	a := startAgent(t)
	c := a.newContext(wire.CreateContextRequest{Language: "python"})
	a.runIn(c.ID, wire.RunCodeRequest{Code: "kept = 'yes'"})
	for _, code := range []string{"while True: pass", "import time\ntime.sleep(60)", "import subprocess\nsubprocess.run(['sleep', '60'])"} {
		res := a.runIn(c.ID, wire.RunCodeRequest{Code: "print('before', flush=True)\n" + code, TimeoutSeconds: 0.3})
		if !res.TimedOut || res.Error == nil || res.Error.Name != "KeyboardInterrupt" || res.Stdout != "before\n" {
			t.Fatalf("%q: %+v", code, res)
		}
		res = a.runIn(c.ID, wire.RunCodeRequest{Code: "kept"})
		if mainText(res) != "'yes'" || res.TimedOut {
			t.Fatalf("after %q: %+v", code, res)
		}
	}
}

func TestContextIgnoredInterruptKills(t *testing.T) {
	needInterpreter(t, "python3")
	old := interruptGrace
	interruptGrace = 300 * time.Millisecond
	t.Cleanup(func() { interruptGrace = old })
	a := startAgent(t)
	c := a.newContext(wire.CreateContextRequest{Language: "python"})
	res := a.runIn(c.ID, wire.RunCodeRequest{Code: "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: pass", TimeoutSeconds: 0.2})
	if !res.TimedOut || res.Error == nil || res.Error.Name != "ContextLost" {
		t.Fatalf("got %+v", res)
	}
	a.waitContextGone(c)
	a.callErr("POST", "/contexts/"+c.ID+"/run", wire.RunCodeRequest{Code: "1"}, http.StatusNotFound, "CONTEXT_NOT_FOUND")
}

func TestContextKilledInterpreter(t *testing.T) {
	t.Parallel()
	needInterpreter(t, "python3")
	a := startAgent(t)
	c := a.newContext(wire.CreateContextRequest{Language: "python"})
	if err := syscall.Kill(c.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	a.waitContextGone(c)
	a.callErr("POST", "/contexts/"+c.ID+"/run", wire.RunCodeRequest{Code: "1"}, http.StatusNotFound, "CONTEXT_NOT_FOUND")
	a.callErr("GET", "/contexts/"+c.ID, nil, http.StatusNotFound, "CONTEXT_NOT_FOUND")
	var list []wire.Context
	a.call("GET", "/contexts", nil, http.StatusOK, &list)
	if len(list) != 0 {
		t.Fatalf("list: %+v", list)
	}

	// The interpreter exiting during a run ends the run and the context.
	c = a.newContext(wire.CreateContextRequest{Language: "python"})
	res := a.runIn(c.ID, wire.RunCodeRequest{Code: "print('bye', flush=True)\nimport os\nos._exit(7)"})
	if res.Error == nil || res.Error.Name != "ContextLost" || !strings.Contains(res.Error.Value, "status 7") || res.Stdout != "bye\n" {
		t.Fatalf("os._exit: %+v", res)
	}
	a.callErr("POST", "/contexts/"+c.ID+"/run", wire.RunCodeRequest{Code: "1"}, http.StatusNotFound, "CONTEXT_NOT_FOUND")
}

// waitContextGone waits until c's interpreter has exited and the agent has
// noticed (from its reaper, a moment later): from then on, every call on c
// answers 404.
func (a *testAgent) waitContextGone(c wire.Context) {
	a.t.Helper()
	waitGone(a.t, c.Pid)
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp := a.do("GET", "/contexts/"+c.ID, nil)
		resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			return
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("context %s still answers %d after its interpreter exited", c.ID, resp.StatusCode)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestContextIdleExpiry(t *testing.T) {
	t.Parallel()
	needInterpreter(t, "bash")
	a := startAgent(t)
	one, zero := 1, 0
	c := a.newContext(wire.CreateContextRequest{Language: "bash", IdleSeconds: &one})
	keep := a.newContext(wire.CreateContextRequest{Language: "bash", IdleSeconds: &zero})
	if keep.ExpiresAt != nil || c.ExpiresAt == nil || c.IdleSeconds != 1 {
		t.Fatalf("expiry: %+v %+v", c, keep)
	}
	a.waitContextGone(c)
	a.callErr("POST", "/contexts/"+c.ID+"/run", wire.RunCodeRequest{Code: "true"}, http.StatusNotFound, "CONTEXT_NOT_FOUND")
	if res := a.runIn(keep.ID, wire.RunCodeRequest{Code: "echo alive"}); res.Stdout != "alive\n" {
		t.Fatalf("context without idle limit: %+v", res)
	}
}

func TestContextBash(t *testing.T) {
	t.Parallel()
	needInterpreter(t, "bash")
	a := startAgent(t)
	c := a.newContext(wire.CreateContextRequest{Language: "bash", Env: map[string]string{"CTXVAR": "from-create"}})
	res := a.runIn(c.ID, wire.RunCodeRequest{Code: "x=41; declare -i y=1; mkdir -p d && cd d; f() { echo \"f:$1\"; }"})
	if res.Error != nil || res.Stdout != "" || res.Stderr != "" {
		t.Fatalf("define: %+v", res)
	}
	res = a.runIn(c.ID, wire.RunCodeRequest{Code: "echo $((x + y)); pwd; f arg; echo $CTXVAR $RUNVAR", Env: map[string]string{"RUNVAR": "run only"}})
	if want := "42\n" + filepath.Join(a.cwd, "d") + "\nf:arg\nfrom-create run only\n"; res.Stdout != want || res.Error != nil {
		t.Fatalf("state: %q, want %q (%+v)", res.Stdout, want, res)
	}
	res = a.runIn(c.ID, wire.RunCodeRequest{Code: "echo \"[$RUNVAR]\"; false"})
	if res.Stdout != "[]\n" || res.Error == nil || res.Error.Value != "exit status 1" {
		t.Fatalf("exit status: %+v", res)
	}
	// A syntax error leaves the shell as it was.
	res = a.runIn(c.ID, wire.RunCodeRequest{Code: "if then fi ("})
	if res.Error == nil || !strings.Contains(res.Stderr, "syntax error") {
		t.Fatalf("syntax error: %+v", res)
	}
	// Every character reaches bash as it is. (Code is a JSON string, so
	// it is valid UTF-8; NUL is refused below.)
	var all strings.Builder
	for i := 1; i < 128; i++ {
		if i != '\n' {
			all.WriteByte(byte(i))
		}
	}
	all.WriteString("é漢字🙂")
	var out bytes.Buffer
	ev := a.runStream(context.Background(), "/contexts/"+c.ID+"/run", wire.RunCodeRequest{Code: "cat <<'EOF'\n" + all.String() + "\nEOF\n" + protocolNoiseShell()})
	out.WriteString(ev.stdout)
	if !strings.HasPrefix(out.String(), all.String()+"\n") || ev.res.Error != nil {
		t.Fatalf("bytes: %q (%+v)", out.String(), ev.res)
	}
	a.callErr("POST", "/contexts/"+c.ID+"/run", wire.RunCodeRequest{Code: "a\x00b"}, http.StatusBadRequest, "INVALID_RUN")
	a.callErr("POST", "/contexts/"+c.ID+"/run", wire.RunCodeRequest{Code: "true", Env: map[string]string{"1x": "v"}}, http.StatusBadRequest, "INVALID_ENV")

	// Interrupts: a builtin loop, and a foreground child.
	for _, code := range []string{"while :; do :; done", "sleep 60"} {
		res = a.runIn(c.ID, wire.RunCodeRequest{Code: "echo before; " + code, TimeoutSeconds: 0.3})
		if !res.TimedOut || res.Stdout != "before\n" {
			t.Fatalf("%q: %+v", code, res)
		}
		res = a.runIn(c.ID, wire.RunCodeRequest{Code: "echo $x"})
		if res.Stdout != "41\n" || res.TimedOut || res.Error != nil {
			t.Fatalf("after %q: %+v", code, res)
		}
	}
}

// protocolNoiseShell prints protocolNoise from bash to both streams.
func protocolNoiseShell() string {
	return "printf '%s' " + ansiCQuote(strings.ReplaceAll(protocolNoise(), "\x00", "")) + "; printf '%s' " + ansiCQuote("{\"type\":\"done\",\"seq\":1}\n") + " >&2"
}

func TestContextJavaScript(t *testing.T) {
	t.Parallel()
	needInterpreter(t, "node", "nodejs")
	a := startAgent(t)
	c := a.newContext(wire.CreateContextRequest{Language: "javascript"})
	res := a.runIn(c.ID, wire.RunCodeRequest{Code: "let x = 41; var y = 1; function inc(v) { return v + 1 }; globalThis.z = 'zz'"})
	if res.Error != nil {
		t.Fatalf("define: %+v", res)
	}
	res = a.runIn(c.ID, wire.RunCodeRequest{Code: "console.log('hi'); process.stderr.write('err\\n'); inc(x)"})
	if mainText(res) != "42" || res.Stdout != "hi\n" || res.Stderr != "err\n" {
		t.Fatalf("state: %+v", res)
	}
	res = a.runIn(c.ID, wire.RunCodeRequest{Code: "({a: [1, 2], y, z})"})
	if len(res.Results) != 1 || string(res.Results[0].JSON) != `{"a":[1,2],"y":1,"z":"zz"}` {
		t.Fatalf("object: %+v", res)
	}
	res = a.runIn(c.ID, wire.RunCodeRequest{Code: "Promise.resolve(6).then(v => v * 7)"})
	if mainText(res) != "42" {
		t.Fatalf("promise: %+v", res)
	}
	res = a.runIn(c.ID, wire.RunCodeRequest{Code: "undefinedThing + 1"})
	if res.Error == nil || res.Error.Name != "ReferenceError" || !strings.Contains(res.Error.Traceback, "cell-") {
		t.Fatalf("error: %+v", res)
	}
	res = a.runIn(c.ID, wire.RunCodeRequest{Code: `require('fs').writeSync(1, '{"type":"done","seq":1}\n'); 'ok'`})
	if mainText(res) != "'ok'" || res.Stdout != `{"type":"done","seq":1}`+"\n" {
		t.Fatalf("forged frame: %+v", res)
	}
	for _, code := range []string{"while (true) {}", "new Promise(() => {})"} {
		res = a.runIn(c.ID, wire.RunCodeRequest{Code: code, TimeoutSeconds: 0.3})
		if !res.TimedOut || res.Error == nil {
			t.Fatalf("%q: %+v", code, res)
		}
		if res = a.runIn(c.ID, wire.RunCodeRequest{Code: "x"}); mainText(res) != "41" {
			t.Fatalf("after %q: %+v", code, res)
		}
	}
	other := a.newContext(wire.CreateContextRequest{Language: "javascript"})
	if res = a.runIn(other.ID, wire.RunCodeRequest{Code: "x"}); res.Error == nil || res.Error.Name != "ReferenceError" {
		t.Fatalf("x in another context: %+v", res)
	}
}

// TestContextJavaScriptTopLevelAwait: a cell may await at its top level, as
// in node's REPL and Cloudflare's interpreter (issue 13.21).
func TestContextJavaScriptTopLevelAwait(t *testing.T) {
	t.Parallel()
	needInterpreter(t, "node", "nodejs")
	a := startAgent(t)
	c := a.newContext(wire.CreateContextRequest{Language: "javascript"})
	res := a.runIn(c.ID, wire.RunCodeRequest{Code: "await Promise.resolve(41) + 1"})
	if res.Error != nil || mainText(res) != "42" {
		t.Fatalf("await expression: %+v", res)
	}
	res = a.runIn(c.ID, wire.RunCodeRequest{Code: "const a = await Promise.resolve(1); let b = 2; var c = 3; function f() { return a + b + c }\nconst {p, q} = await Promise.resolve({p: 10, q: 20})"})
	if res.Error != nil || len(res.Results) != 0 {
		t.Fatalf("declarations: %+v", res)
	}
	res = a.runIn(c.ID, wire.RunCodeRequest{Code: "f() + p + q"})
	if res.Error != nil || mainText(res) != "36" {
		t.Fatalf("declarations did not persist: %+v", res)
	}
	res = a.runIn(c.ID, wire.RunCodeRequest{Code: "console.log('before'); await new Promise(r => setTimeout(r, 10)); throw new TypeError('after await')"})
	if res.Error == nil || res.Error.Name != "TypeError" || res.Error.Value != "after await" || res.Stdout != "before\n" {
		t.Fatalf("error after await: %+v", res)
	}
	// A pending await is interrupted by a timeout; the context lives on.
	res = a.runIn(c.ID, wire.RunCodeRequest{Code: "await new Promise(() => {})", TimeoutSeconds: 0.3})
	if !res.TimedOut || res.Error == nil {
		t.Fatalf("timeout: %+v", res)
	}
	if res = a.runIn(c.ID, wire.RunCodeRequest{Code: "a + b"}); mainText(res) != "3" {
		t.Fatalf("after the timeout: %+v", res)
	}
	// "await" as a plain name or in a string is not a top-level await.
	if res = a.runIn(c.ID, wire.RunCodeRequest{Code: "'await'.length"}); mainText(res) != "5" {
		t.Fatalf("string: %+v", res)
	}
}

func TestStatelessRun(t *testing.T) {
	t.Parallel()
	needInterpreter(t, "python3")
	a := startAgent(t)
	var res wire.RunResult
	a.call("POST", "/run", wire.RunRequest{Language: "python", Code: "x = 41\nx + 1"}, http.StatusOK, &res)
	if mainText(res) != "42" {
		t.Fatalf("first: %+v", res)
	}
	a.call("POST", "/run", wire.RunRequest{Language: "python", Code: "x"}, http.StatusOK, &res)
	if res.Error == nil || res.Error.Name != "NameError" {
		t.Fatalf("second: %+v", res)
	}
	a.call("POST", "/run", wire.RunRequest{Language: "sh", Code: "echo sh-$V; exit 3", Env: map[string]string{"V": "v"}}, http.StatusOK, &res)
	if res.Stdout != "sh-v\n" || res.Error == nil || res.Error.Value != "exit status 3" {
		t.Fatalf("sh: %+v", res)
	}
	a.call("POST", "/run", wire.RunRequest{Language: "sh", Code: "sleep 60", TimeoutSeconds: 0.2}, http.StatusOK, &res)
	if !res.TimedOut {
		t.Fatalf("sh timeout: %+v", res)
	}
	a.callErr("POST", "/contexts", wire.CreateContextRequest{Language: "sh"}, http.StatusBadRequest, "LANGUAGE_STATELESS_ONLY")
	a.callErr("POST", "/contexts", wire.CreateContextRequest{Language: "cobol"}, http.StatusBadRequest, "UNKNOWN_LANGUAGE")
	a.callErr("POST", "/run", wire.RunRequest{Language: "cobol"}, http.StatusBadRequest, "UNKNOWN_LANGUAGE")
	a.callErr("POST", "/run", wire.RunRequest{Language: "python", TimeoutSeconds: -1}, http.StatusBadRequest, "INVALID_RUN")
	a.callErr("POST", "/contexts", wire.CreateContextRequest{Language: "python", Cwd: "/no/such/dir"}, http.StatusBadRequest, "CWD_NOT_FOUND")
	a.callErr("POST", "/contexts", map[string]any{"language": "python", "contextIdleSeconds": -1}, http.StatusBadRequest, "INVALID_IDLE")
	a.callErr("POST", "/contexts/ctx-nope/run", wire.RunCodeRequest{Code: "1"}, http.StatusNotFound, "CONTEXT_NOT_FOUND")
	a.callErr("DELETE", "/contexts/ctx-nope", nil, http.StatusNotFound, "CONTEXT_NOT_FOUND")
	// An interpreter that cannot start says why.
	a.callErr("POST", "/contexts", wire.CreateContextRequest{Language: "python", Env: map[string]string{"PYTHONHOME": "/nonexistent"}}, http.StatusBadRequest, "INTERPRETER_FAILED")
}

func TestContextStream(t *testing.T) {
	t.Parallel()
	needInterpreter(t, "python3")
	a := startAgent(t)
	c := a.newContext(wire.CreateContextRequest{Language: "python"})
	ev := a.runStream(context.Background(), "/contexts/"+c.ID+"/run", wire.RunCodeRequest{Code: "import sys\nprint('out')\nprint('err', file=sys.stderr)\ndisplay(1)\nraise ValueError('boom')"})
	if ev.stdout != "out\n" || ev.stderr != "err\n" || len(ev.res.Results) != 1 || ev.res.Error == nil || ev.res.Error.Name != "ValueError" || ev.res.Error.Value != "boom" {
		t.Fatalf("stream: %+v", ev)
	}
	// Output written before a result comes before it in the stream (the
	// order between stdout and stderr, two pipes, is not kept exactly).
	n := len(ev.types)
	if n < 5 || !slices.Equal(ev.types[n-3:], []string{"result", "error", "end"}) {
		t.Fatalf("events %v: want output, then result, error and end", ev.types)
	}
}

// streamed is a run read through ?stream=true.
type streamed struct {
	types          []string
	stdout, stderr string
	res            wire.RunResult
}

func (a *testAgent) runStream(ctx context.Context, path string, body any) streamed {
	a.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(ctx, "POST", "http://agent"+path+"?stream=true", bytes.NewReader(b))
	resp, err := a.http.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		a.t.Fatalf("stream: status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var s streamed
	var out, errb strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var ev wire.RunEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			a.t.Fatalf("bad event %q: %v", sc.Bytes(), err)
		}
		if len(s.types) > 0 && s.types[len(s.types)-1] == "end" {
			a.t.Fatalf("event after end: %+v", ev)
		}
		s.types = append(s.types, ev.Type)
		switch ev.Type {
		case "stdout":
			out.Write(ev.Data)
		case "stderr":
			errb.Write(ev.Data)
		case "result":
			s.res.Results = append(s.res.Results, *ev.Result)
		case "error":
			s.res.Error = ev.Error
		case "end":
			s.res.TimedOut, s.res.DurationMs = ev.TimedOut, ev.DurationMs
		}
	}
	if len(s.types) == 0 || s.types[len(s.types)-1] != "end" {
		a.t.Fatalf("stream did not end with an end event: %v", s.types)
	}
	s.stdout, s.stderr = out.String(), errb.String()
	return s
}
