package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/sbxhq/sbx/sdk"
)

// TestDashboard drives the dashboard at /ui in Debian's headless Chromium:
// log in, watch a sandbox appear live after an API create, run a command in
// its terminal, upload a file, stop it and delete it, with screenshots of
// the main pages saved to $SBX_ARTIFACTS_DIR (default <repo>/artifacts/ui).
// One daemon and one browser for every step.
func TestDashboard(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("the dashboard tests need Debian's chromium: scripts/setup-tests.sh installs it")
	}
	d := startDaemon(t, "--ui-stats-every", "1s", "--log-level", "debug")
	key := d.token
	base := d.baseURL()
	shots := artifactsDir(t)

	t.Run("EndpointsRefuseWithoutSession", func(t *testing.T) {
		for _, path := range []string{"/ui/session", "/ui/api/v1/sandboxes", "/ui/stats", "/ui/system"} {
			req, _ := http.NewRequest("GET", base+path, nil)
			req.Header.Set("Authorization", "Bearer "+key) // the API's key is no dashboard session
			resp, err := d.httpClient().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("GET %s without a session: %d, want 401", path, resp.StatusCode)
			}
		}
	})

	// Each step needs the one before: stop at the first that fails.
	step := func(name string, f func(t *testing.T)) {
		if !t.Run(name, f) {
			t.FailNow()
		}
	}
	ctx, cancel := newBrowser(t, chromium)
	defer cancel()
	var mu sync.Mutex
	var urls []string // every URL the browser requested
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			urls = append(urls, e.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	failed := func(t *testing.T, err error) {
		t.Helper()
		if shot, serr := chromedp.Run(ctx, chromedp.CaptureScreenshot()); serr == nil {
			os.WriteFile(filepath.Join(shots, "failure-"+strings.ReplaceAll(t.Name(), "/", "_")+".png"), shot, 0o644)
		}
		if text, serr := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("main").innerText.slice(0, 2000)`)); serr == nil {
			t.Logf("the page shows:\n%s", text)
		}
		t.Fatal(err)
	}
	run := func(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		actx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		if err := chromedp.Do(actx, actions...); err != nil {
			failed(t, err)
		}
	}
	eval := func(t *testing.T, expr string, opts ...chromedp.EvaluateOption) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[any](expr, opts...))
		if err != nil {
			failed(t, err)
		}
		return fmt.Sprint(v)
	}
	screenshot := func(name string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			b, err := chromedp.CaptureScreenshot()(ctx, tg)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(shots, name), b, 0o644)
		})
	}
	// goTo changes the page's route (its hash): no reload, as a click would.
	goTo := func(hash string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Evaluate[any](fmt.Sprintf("location.hash = %q", hash))(ctx, tg)
			return err
		})
	}
	poll := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(30*time.Second))(ctx, tg)
			return err
		})
	}

	step("Login", func(t *testing.T) {
		if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
			t.Fatal(err)
		}
		run(t, chromedp.EmulateViewport(1280, 800),
			chromedp.Navigate(base+"/ui/"), chromedp.WaitVisible(chromedp.CSS("#key")), screenshot("login.png"),
			chromedp.SendKeys(chromedp.CSS("#key"), "wrong-key"), chromedp.Click(chromedp.CSS("#login")),
			chromedp.WaitVisible(`//p[@id="login-error" and contains(., "Wrong API key")]`),
			chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				_, err := chromedp.Evaluate[any](`document.querySelector("#key").value = ""`)(ctx, tg)
				return err
			}),
			chromedp.SendKeys(chromedp.CSS("#key"), key), chromedp.Click(chromedp.CSS("#login")),
			chromedp.WaitVisible(chromedp.CSS("table.sandboxes")))
	})

	var sb *sdk.Sandbox
	step("SandboxAppearsLive", func(t *testing.T) {
		eval(t, `window.__sbxNoReload = "same page"`)
		sb = d.create(sdk.CreateSandboxRequest{Name: "ui-demo", Labels: map[string]string{"team": "dashboard"}})
		row := fmt.Sprintf(`tr[data-id=%q]`, sb.ID)
		run(t, chromedp.WaitVisible(chromedp.CSS(row)),
			chromedp.WaitVisible(fmt.Sprintf(`//tr[@data-id=%q]//span[contains(@class,"state-started")]`, sb.ID)),
			screenshot("sandboxes.png"))
		if eval(t, `window.__sbxNoReload`) != "same page" {
			t.Fatal("the page reloaded to show the new sandbox")
		}
	})
	page := "#/sandboxes/" + sb.ID

	step("Terminal", func(t *testing.T) {
		run(t, goTo(page+"/terminal"),
			chromedp.WaitVisible(`//span[@id="term-status" and text()="connected"]`),
			chromedp.WaitReady(chromedp.CSS(".xterm-helper-textarea")),
			chromedp.Focus(chromedp.CSS(".xterm-helper-textarea")),
			// Typed as an input method would: CDP's key events for a printable
			// character reach xterm.js twice (keydown with text, then char).
			chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				_, err := chromedp.Call(ctx, input.InsertText, input.InsertTextParams{Text: "echo $((6*7))"})
				return err
			}),
			chromedp.KeyEvent("\r"),
			poll(`[...document.querySelectorAll(".xterm-rows > div")].some(r => r.textContent.trim() === "42")`),
			screenshot("terminal.png"))
		screen := eval(t, `document.querySelector(".xterm-rows").textContent`)
		if !strings.Contains(screen, "echo $((6*7))") {
			t.Fatalf("the terminal does not show the typed command: %q", screen)
		}
		// Resize reaches the PTY through the socket.
		run(t, chromedp.EmulateViewport(1000, 700))
		waitFor(t, 20*time.Second, "the PTY to take the new size", func() bool {
			ptys, err := d.client.ListPTYs(context.Background(), sb.ID)
			return err == nil && len(ptys) == 1 && ptys[0].Cols > 0 && ptys[0].Cols < 120
		})
		run(t, chromedp.EmulateViewport(1280, 800))
		// A reload attaches to the same shell again, its output replayed.
		eval(t, `window.__sbxBefore = 1`)
		run(t, chromedp.Reload(), poll(`!window.__sbxBefore && document.querySelector("#term-status")?.textContent === "connected" &&
			[...document.querySelectorAll(".xterm-rows > div")].some(r => r.textContent.trim() === "42")`))
		if ptys, err := d.client.ListPTYs(context.Background(), sb.ID); err != nil || len(ptys) != 1 {
			t.Fatalf("after the reload: %d terminals (%v), want the one shell", len(ptys), err)
		}
	})

	step("Upload", func(t *testing.T) {
		local := filepath.Join(t.TempDir(), "hello-ui.txt")
		os.WriteFile(local, []byte("uploaded from the dashboard\n"), 0o644)
		run(t, goTo(page+"/files"), chromedp.WaitReady(chromedp.CSS("#upload")),
			chromedp.SetUploadFiles(chromedp.CSS("#upload"), []string{local}),
			chromedp.WaitVisible(chromedp.CSS(`tr[data-name="hello-ui.txt"]`)),
			chromedp.Click(`//tr[@data-name="hello-ui.txt"]//a`),
			chromedp.WaitVisible(`//div[@id="preview"]/pre[contains(., "uploaded from the dashboard")]`),
			screenshot("files.png"))
		rc, err := d.client.Download(context.Background(), sb.ID, "hello-ui.txt")
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		if b, _ := io.ReadAll(rc); string(b) != "uploaded from the dashboard\n" {
			t.Fatalf("the uploaded file holds %q", b)
		}
	})

	step("ProcessLogsFollow", func(t *testing.T) {
		_, err := d.client.StartProcess(context.Background(), sb.ID, sdk.StartProcessRequest{ID: "ticker", Shell: "echo first-line; read x; echo after-$x"})
		if err != nil {
			t.Fatal(err)
		}
		run(t, goTo(page+"/logs"), chromedp.WaitReady(chromedp.CSS(`select option[value="ticker"]`)),
			chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				_, err := chromedp.Evaluate[any](`const s = document.querySelector("main select"); s.value = "ticker"; s.dispatchEvent(new Event("change"))`)(ctx, tg)
				return err
			}),
			chromedp.WaitVisible(`//pre[@id="logs" and contains(., "first-line")]`))
		// Output written after the page opened arrives without a reload.
		if err := d.client.WriteStdin(context.Background(), sb.ID, "ticker", []byte("stdin\n")); err != nil {
			t.Fatal(err)
		}
		run(t, chromedp.WaitVisible(`//pre[@id="logs" and contains(., "after-stdin")]`), screenshot("logs.png"))
	})

	step("Overview", func(t *testing.T) {
		// Sampled every second (--ui-stats-every 1s) and redrawn every 5 s,
		// the charts have lines by now or soon.
		run(t, goTo(page), chromedp.WaitVisible(chromedp.CSS("#timeline li")),
			chromedp.WaitVisible(chromedp.CSS("#charts svg path.line")), screenshot("sandbox.png"))
		if os.Getenv("SBX_UPDATE_SCREENSHOT") == "1" {
			b, _ := os.ReadFile(filepath.Join(shots, "sandbox.png"))
			os.WriteFile(filepath.Join(repoRoot(t), "docs", "dashboard.png"), b, 0o644)
		}
	})

	step("StopWithoutReload", func(t *testing.T) {
		run(t, chromedp.WaitVisible(chromedp.CSS(`button[data-action="stop"]:not([disabled])`)))
		eval(t, `window.__sbxNoReload = "same page"`)
		run(t, chromedp.Click(chromedp.CSS(`button[data-action="stop"]`)), chromedp.WaitVisible(chromedp.CSS("#confirm-ok")), chromedp.Click(chromedp.CSS("#confirm-ok")),
			chromedp.WaitVisible(chromedp.CSS(`#sandbox-state .state-stopped`)),
			chromedp.WaitVisible(chromedp.CSS(`#timeline .state-stopped`)))
		if eval(t, `window.__sbxNoReload`) != "same page" {
			t.Fatal("the page reloaded to show the stop")
		}
		got, err := d.client.GetSandbox(context.Background(), sb.ID)
		if err != nil || got.State != sdk.StateStopped {
			t.Fatalf("after the stop: %v %v", got, err)
		}
	})

	step("OtherPages", func(t *testing.T) {
		run(t, goTo("#/images"), chromedp.WaitVisible(chromedp.CSS(`table.images tbody tr[data-name]`)), screenshot("images.png"),
			goTo("#/system"), chromedp.WaitVisible(chromedp.CSS(`#doctor tr`)), chromedp.WaitVisible(chromedp.CSS(`#capacity`)), screenshot("system.png"),
			// Dark, on a narrow window.
			goTo("#/sandboxes"), chromedp.WaitVisible(chromedp.CSS("table.sandboxes")),
			chromedp.KeyEvent("t"), chromedp.WaitReady(chromedp.CSS(`html[data-theme="dark"]`)),
			chromedp.EmulateViewport(420, 800), screenshot("sandboxes-dark-narrow.png"),
			chromedp.KeyEvent("t"), chromedp.EmulateViewport(1280, 800))
	})

	step("Delete", func(t *testing.T) {
		run(t, goTo(page), chromedp.WaitVisible(chromedp.CSS(`button[data-action="delete"]:not([disabled])`)),
			chromedp.Click(chromedp.CSS(`button[data-action="delete"]`)), chromedp.WaitVisible(chromedp.CSS("#confirm-ok")), chromedp.Click(chromedp.CSS("#confirm-ok")),
			chromedp.WaitVisible(chromedp.CSS("table.sandboxes")),
			chromedp.WaitNotPresent(chromedp.CSS(fmt.Sprintf(`tr[data-id=%q]`, sb.ID))))
		waitFor(t, 60*time.Second, "the sandbox to be gone", func() bool {
			_, err := d.client.GetSandbox(context.Background(), sb.ID)
			return err != nil && strings.Contains(err.Error(), string(sdk.CodeSandboxNotFound))
		})
	})

	step("Logout", func(t *testing.T) {
		run(t, chromedp.Click(chromedp.CSS("#logout")), chromedp.WaitVisible(chromedp.CSS("#key")))
		if status := eval(t, `fetch("/ui/api/v1/sandboxes").then(r => r.status)`, chromedp.EvalAwaitPromise); status != "401" {
			t.Fatalf("after logout the API through the dashboard answers %s", status)
		}
	})

	step("KeyNeverInURLOrLog", func(t *testing.T) {
		mu.Lock()
		defer mu.Unlock()
		if len(urls) < 10 {
			t.Fatalf("only %d requests seen: the URL check saw nothing", len(urls))
		}
		for _, u := range urls {
			if strings.Contains(u, key) {
				t.Fatalf("the key appears in a URL the browser requested: %s", u)
			}
		}
		log, err := os.ReadFile(filepath.Join(d.dataDir, "daemon.log"))
		if err != nil || !strings.Contains(string(log), "/ui/") {
			t.Fatalf("the daemon log shows no dashboard request (%v)", err)
		}
		if strings.Contains(string(log), key) {
			t.Fatal("the API key appears in the daemon's log")
		}
	})
}

// newBrowser starts Debian's Chromium headless with a fresh profile.
func newBrowser(t *testing.T, chromium string) (context.Context, context.CancelFunc) {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 800),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		cancelCtx()
		cancelAlloc()
		t.Fatalf("start chromium: %v", err)
	}
	return ctx, func() { cancelCtx(); cancelAlloc() }
}

// artifactsDir is where the dashboard's screenshots go: $SBX_ARTIFACTS_DIR,
// else <repo>/artifacts/ui (gitignored; CI keeps it as artifacts).
func artifactsDir(t *testing.T) string {
	dir := os.Getenv("SBX_ARTIFACTS_DIR")
	if dir == "" {
		dir = filepath.Join(repoRoot(t), "artifacts", "ui")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

func repoRoot(t *testing.T) string {
	wd, err := os.Getwd() // go test runs in the package's directory
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(wd)
}
