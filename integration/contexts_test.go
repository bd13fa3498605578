package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// The python image (Debian with python3, numpy, pandas, matplotlib, node)
// is built once per machine by scripts/build-python-image.sh and cached
// outside the repository; SBX_PYTHON_IMAGE points at a prebuilt tarball.
// A missing image is built here, not skipped: it needs the Debian archive.
var pythonImage struct {
	once sync.Once
	path string
	err  error
}

func pythonImageTar(t *testing.T) string {
	t.Helper()
	pythonImage.once.Do(func() {
		if p := os.Getenv("SBX_PYTHON_IMAGE"); p != "" {
			pythonImage.path = p
			return
		}
		start := time.Now()
		cmd := exec.Command("../scripts/build-python-image.sh")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, os.Stderr // build progress shows in the test log
		if err := cmd.Run(); err != nil {
			pythonImage.err = fmt.Errorf("build the python image: %v", err)
			return
		}
		pythonImage.path = strings.TrimSpace(out.String())
		if d := time.Since(start); d > 5*time.Second {
			fmt.Fprintf(os.Stderr, "built the python image in %s\n", d.Round(time.Second))
		}
	})
	if pythonImage.err != nil {
		t.Fatal(pythonImage.err)
	}
	return pythonImage.path
}

// importPython imports the python image into d as "python".
func importPython(t *testing.T, d *daemon) { importImageTar(t, d, "python", pythonImageTar(t)) }

// importDesktop imports the desktop image into d as "desktop".
func importDesktop(t *testing.T, d *daemon) { importImageTar(t, d, "desktop", desktopImageTar(t)) }

// importImageTar imports the image tarball at path into d as name.
func importImageTar(t *testing.T, d *daemon, name, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	start := time.Now()
	if _, err := d.client.ImportImage(context.Background(), name, f); err != nil {
		t.Fatalf("import the %s image: %v", name, err)
	}
	t.Logf("imported the %s image in %s", name, time.Since(start).Round(time.Millisecond))
}

func mainResult(res *sdk.RunResult) *sdk.CodeResult {
	for i := range res.Results {
		if res.Results[i].Main {
			return &res.Results[i]
		}
	}
	return nil
}

func mainText(res *sdk.RunResult) string {
	if r := mainResult(res); r != nil {
		return r.Text
	}
	return ""
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var ae *sdk.APIError
	if !errors.As(err, &ae) || string(ae.Code) != code {
		t.Fatalf("got error %v, want code %s", err, code)
	}
}

func TestContexts(t *testing.T) {
	d := startDaemon(t)
	importPython(t, d)
	ctx := context.Background()
	c := d.client
	sb := d.create(sdk.CreateSandboxRequest{Name: "py", Image: "python", MemoryMiB: 2048})

	newCtx := func(lang string) *sdk.Context {
		t.Helper()
		x, err := c.CreateContext(ctx, sb.ID, sdk.CreateContextRequest{Language: lang})
		if err != nil {
			t.Fatalf("create %s context: %v", lang, err)
		}
		return x
	}
	run := func(cid, code string, timeout float64) *sdk.RunResult {
		t.Helper()
		res, err := c.RunCode(ctx, sb.ID, cid, sdk.RunCodeRequest{Code: code, TimeoutSeconds: timeout}, nil)
		if err != nil {
			t.Fatalf("run %q: %v", code, err)
		}
		return res
	}
	py := newCtx("python")

	t.Run("state", func(t *testing.T) {
		run(py.ID, "x = 41", 0)
		if res := run(py.ID, "x + 1", 0); mainText(res) != "42" || res.Error != nil {
			t.Fatalf("x + 1: %+v", res)
		}
		other := newCtx("python")
		if res := run(other.ID, "x", 0); res.Error == nil || res.Error.Name != "NameError" {
			t.Fatalf("x in another context: %+v", res)
		}
		res, err := c.Run(ctx, sb.ID, sdk.RunRequest{Language: "python", Code: "x"}, nil)
		if err != nil || res.Error == nil || res.Error.Name != "NameError" {
			t.Fatalf("x in a stateless run: %+v %v", res, err)
		}
		res, err = c.Run(ctx, sb.ID, sdk.RunRequest{Language: "python", Code: "x = 41\nx + 1"}, nil)
		if err != nil || mainText(res) != "42" {
			t.Fatalf("stateless run: %+v %v", res, err)
		}
		if err := c.DeleteContext(ctx, sb.ID, other.ID); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("matplotlib", func(t *testing.T) {
		// A figure left open, and one shown with plt.show().
		res := run(py.ID, "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\nplt.title('left open')\nNone", 0)
		pngs := 0
		check := func(res *sdk.RunResult) {
			t.Helper()
			for _, r := range res.Results {
				if len(r.PNG) == 0 {
					continue
				}
				img, err := png.Decode(bytes.NewReader(r.PNG))
				if err != nil {
					t.Fatalf("result is not a PNG: %v", err)
				}
				if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
					t.Fatalf("PNG is %v", b)
				}
				pngs++
			}
		}
		check(res)
		if pngs != 1 || res.Error != nil {
			t.Fatalf("open figure: %d PNGs, %+v", pngs, res)
		}
		res = run(py.ID, "plt.figure()\nplt.bar(['a', 'b'], [3, 5])\nplt.show()\nprint('after show')", 0)
		check(res)
		if pngs != 2 || res.Stdout != "after show\n" {
			t.Fatalf("plt.show: %d PNGs, %+v", pngs, res)
		}
		// Shown figures are closed: the next run has no image.
		if res := run(py.ID, "len(plt.get_fignums())", 0); mainText(res) != "0" || len(res.Results) != 1 {
			t.Fatalf("figures left open: %+v", res)
		}
	})

	t.Run("dataframe", func(t *testing.T) {
		res := run(py.ID, "import pandas as pd\npd.DataFrame({'a': [1, 2], 'b': [3.5, 4.5]})", 0)
		r := mainResult(res)
		if r == nil || !strings.Contains(r.HTML, "<table") || !strings.Contains(r.Text, "3.5") {
			t.Fatalf("DataFrame: %+v", res)
		}
		res = run(py.ID, "{'k': [1, 2]}", 0)
		if r := mainResult(res); r == nil || string(r.JSON) != `{"k":[1,2]}` {
			t.Fatalf("dict: %+v", res)
		}
	})

	t.Run("timeout", func(t *testing.T) {
		start := time.Now()
		res := run(py.ID, "while True: pass", 0.5)
		if !res.TimedOut || res.Error == nil || res.Error.Name != "KeyboardInterrupt" {
			t.Fatalf("infinite loop: %+v", res)
		}
		t.Logf("timed out run returned after %s", time.Since(start).Round(time.Millisecond))
		if res := run(py.ID, "x + 1", 0); mainText(res) != "42" {
			t.Fatalf("after the timeout: %+v", res)
		}
	})

	t.Run("bytes", func(t *testing.T) {
		// Whatever the code writes, including lines shaped like the
		// drivers' frames, is output and nothing else.
		code := `import os, subprocess, sys
noise = b'{"type":"done","seq":1}\n{"type":"result","seq":2,"main":true,"data":{"text/plain":"forged"}}\n' + bytes(range(256))
sys.stdout.write('{"type":"error","seq":3,"name":"Forged"}\n'); sys.stdout.flush()
os.write(1, noise)
os.write(2, noise)
subprocess.run(['printf', '{"type":"done","seq":4}\\n'], check=True)
'ok'`
		var stdout, stderr bytes.Buffer
		res, err := c.RunCode(ctx, sb.ID, py.ID, sdk.RunCodeRequest{Code: code}, &sdk.RunHandlers{
			Stdout: func(b []byte) { stdout.Write(b) },
			Stderr: func(b []byte) { stderr.Write(b) },
		})
		if err != nil {
			t.Fatal(err)
		}
		noise := []byte("{\"type\":\"done\",\"seq\":1}\n{\"type\":\"result\",\"seq\":2,\"main\":true,\"data\":{\"text/plain\":\"forged\"}}\n")
		for i := 0; i < 256; i++ {
			noise = append(noise, byte(i))
		}
		want := append([]byte("{\"type\":\"error\",\"seq\":3,\"name\":\"Forged\"}\n"), noise...)
		want = append(want, "{\"type\":\"done\",\"seq\":4}\n"...)
		if !bytes.Equal(stdout.Bytes(), want) || !bytes.Equal(stderr.Bytes(), noise) {
			t.Fatalf("stdout %q\nwant   %q\nstderr %q", stdout.Bytes(), want, stderr.Bytes())
		}
		if res.Error != nil || len(res.Results) != 1 || res.Results[0].Text != "'ok'" {
			t.Fatalf("result: %+v", res)
		}
		if res := run(py.ID, "x", 0); mainText(res) != "41" {
			t.Fatalf("after the noise: %+v", res)
		}
	})

	t.Run("javascript and bash", func(t *testing.T) {
		js := newCtx("javascript")
		run(js.ID, "let x = 41; function inc(v) { return v + 1 }", 0)
		if res := run(js.ID, "console.log('js'); inc(x)", 0); mainText(res) != "42" || res.Stdout != "js\n" {
			t.Fatalf("javascript: %+v", res)
		}
		// Top-level await, with declarations that persist (the image's node).
		if res := run(js.ID, "const y = await Promise.resolve(x); await Promise.resolve(y) + 1", 0); mainText(res) != "42" || res.Error != nil {
			t.Fatalf("top-level await: %+v", res)
		}
		if res := run(js.ID, "y + 1", 0); mainText(res) != "42" {
			t.Fatalf("declared in an awaited cell: %+v", res)
		}
		if res := run(js.ID, "await null; throw new RangeError('late')", 0); res.Error == nil || res.Error.Name != "RangeError" {
			t.Fatalf("error after await: %+v", res)
		}
		sh := newCtx("bash")
		run(sh.ID, "x=41; cd /tmp", 0)
		if res := run(sh.ID, "echo $((x + 1)) $PWD", 0); res.Stdout != "42 /tmp\n" {
			t.Fatalf("bash: %+v", res)
		}
		res, err := c.Run(ctx, sb.ID, sdk.RunRequest{Language: "sh", Code: "echo stateless-$((6 * 7))"}, nil)
		if err != nil || res.Stdout != "stateless-42\n" {
			t.Fatalf("sh: %+v %v", res, err)
		}
		_, err = c.CreateContext(ctx, sb.ID, sdk.CreateContextRequest{Language: "sh"})
		wantCode(t, err, "LANGUAGE_STATELESS_ONLY")
		_, err = c.Run(ctx, sb.ID, sdk.RunRequest{Language: "ruby", Code: "puts 1"}, nil)
		wantCode(t, err, "LANGUAGE_NOT_AVAILABLE")
	})

	t.Run("killed interpreter", func(t *testing.T) {
		victim := newCtx("python")
		run(victim.ID, "y = 1", 0)
		if res, err := c.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: fmt.Sprintf("kill -9 %d", victim.Pid)}); err != nil || res.ExitCode != 0 {
			t.Fatalf("kill: %+v %v", res, err)
		}
		waitFor(t, 10*time.Second, "the context to be gone", func() bool {
			_, err := c.GetContext(ctx, sb.ID, victim.ID)
			return sdk.IsNotFound(err)
		})
		_, err := c.RunCode(ctx, sb.ID, victim.ID, sdk.RunCodeRequest{Code: "y"}, nil)
		wantCode(t, err, "CONTEXT_NOT_FOUND")
		list, err := c.ListContexts(ctx, sb.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range list {
			if x.ID == victim.ID {
				t.Fatalf("killed context still listed: %+v", list)
			}
		}
	})

	t.Run("cli", func(t *testing.T) {
		out, stderr, code := d.sbx("", "run", "py", "--lang", "python", "-c", "print('hi')\n6 * 7")
		if code != 0 || out != "hi\n42\n" {
			t.Fatalf("sbx run: %d %q %q", code, out, stderr)
		}
		out, stderr, code = d.sbx("1/0", "run", "py", "--lang", "python", "-")
		if code != 1 || !strings.Contains(stderr, "ZeroDivisionError") {
			t.Fatalf("sbx run error: %d %q %q", code, out, stderr)
		}
		out, stderr, code = d.sbx("", "ctx", "create", "py", "--lang", "bash")
		id := strings.TrimSpace(out)
		if code != 0 || !strings.HasPrefix(id, "ctx-") {
			t.Fatalf("sbx ctx create: %d %q %q", code, out, stderr)
		}
		d.sbx("", "ctx", "run", "py", id, "-c", "v=cli")
		if out, stderr, code = d.sbx("", "ctx", "run", "py", id, "-c", "echo $v"); code != 0 || out != "cli\n" {
			t.Fatalf("sbx ctx run: %d %q %q", code, out, stderr)
		}
		dir := t.TempDir()
		if out, stderr, code = d.sbx("", "ctx", "run", "py", py.ID, "--save", dir, "-c", "plt.plot([1, 2]); plt.show()"); code != 0 {
			t.Fatalf("sbx ctx run --save: %d %q %q", code, out, stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "result-1.png")); err != nil {
			t.Fatalf("saved figure: %v (%s)", err, stderr)
		}
		if _, _, code = d.sbx("", "ctx", "run", "py", py.ID, "--timeout", "0.3", "-c", "import time; time.sleep(30)"); code != 124 {
			t.Fatalf("sbx ctx run timeout: exit %d", code)
		}
		out, _, code = d.sbx("", "ctx", "ls", "py", "-o", "json")
		var list []sdk.Context
		if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) < 2 {
			t.Fatalf("sbx ctx ls: %d %q", code, out)
		}
		if _, stderr, code = d.sbx("", "ctx", "rm", "py", id); code != 0 {
			t.Fatalf("sbx ctx rm: %d %q", code, stderr)
		}
		if _, stderr, code = d.sbx("", "ctx", "run", "py", id, "-c", "true"); code != 1 || !strings.Contains(stderr, "CONTEXT_NOT_FOUND") {
			t.Fatalf("run in removed context: %d %q", code, stderr)
		}
	})

	t.Run("stop ends contexts", func(t *testing.T) {
		if _, err := c.StopSandbox(ctx, sb.ID, sdk.StopOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.StartSandbox(ctx, sb.ID); err != nil {
			t.Fatal(err)
		}
		_, err := c.RunCode(ctx, sb.ID, py.ID, sdk.RunCodeRequest{Code: "x"}, nil)
		wantCode(t, err, "CONTEXT_NOT_FOUND")
		if list, err := c.ListContexts(ctx, sb.ID); err != nil || len(list) != 0 {
			t.Fatalf("contexts after a restart: %+v %v", list, err)
		}
	})
}
