package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sbxhq/sbx/sdk"
)

// desktopImage is the desktop image tarball: SBX_DESKTOP_IMAGE, else built
// (or reused from the cache) by scripts/build-desktop-image.sh.
var desktopImage struct {
	once sync.Once
	path string
	err  error
}

func desktopImageTar(t *testing.T) string {
	t.Helper()
	desktopImage.once.Do(func() {
		if p := os.Getenv("SBX_DESKTOP_IMAGE"); p != "" {
			desktopImage.path = p
			return
		}
		cmd := exec.Command("../scripts/build-desktop-image.sh")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, os.Stderr
		if err := cmd.Run(); err != nil {
			desktopImage.err = fmt.Errorf("build the desktop image: %v", err)
			return
		}
		desktopImage.path = strings.TrimSpace(out.String())
	})
	if desktopImage.err != nil {
		t.Fatal(desktopImage.err)
	}
	return desktopImage.path
}

// One desktop sandbox serves every subtest: starting a desktop costs
// seconds and the subtests each leave it usable.
func TestDesktop(t *testing.T) {
	d := startDaemon(t, "--preview-domain", "preview.test")
	ctx := context.Background()
	c := d.client
	f, err := os.Open(desktopImageTar(t))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.ImportImage(ctx, "desktop", f)
	f.Close()
	if err != nil {
		t.Fatalf("import the desktop image: %v", err)
	}
	t.Logf("imported the desktop image in %s", time.Since(start).Round(time.Millisecond))
	sb := d.create(sdk.CreateSandboxRequest{Name: "desk", Image: "desktop", MemoryMiB: 1024})

	t.Run("NotStarted", func(t *testing.T) {
		_, err := c.Screenshot(ctx, sb.ID, sdk.ScreenshotOptions{})
		wantCode(t, err, string(sdk.CodeDesktopNotRunning))
		_, err = c.MoveMouse(ctx, sb.ID, 1, 1)
		wantCode(t, err, string(sdk.CodeDesktopNotRunning))
		st, err := c.DesktopStatus(ctx, sb.ID)
		if err != nil || st.Running {
			t.Fatalf("status before start: %+v, %v", st, err)
		}
		_, err = c.StartDesktop(ctx, sb.ID, sdk.DesktopStartRequest{Width: 10, Height: 10})
		wantCode(t, err, string(sdk.CodeInvalidScreenSize))
	})

	const w, h = 1024, 768
	start = time.Now()
	st, err := c.StartDesktop(ctx, sb.ID, sdk.DesktopStartRequest{Width: w, Height: h})
	if err != nil {
		t.Fatalf("start desktop: %v", err)
	}
	t.Logf("desktop started in %s: %+v", time.Since(start).Round(time.Millisecond), st.Programs)
	if !st.Running || st.Width != w || st.Height != h || len(st.Programs) != 5 {
		t.Fatalf("status after start: %+v", st)
	}

	shot := func(t *testing.T) *image.RGBA {
		t.Helper()
		b, err := c.Screenshot(ctx, sb.ID, sdk.ScreenshotOptions{})
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("screenshot is not a PNG: %v", err)
		}
		if img.Bounds() != image.Rect(0, 0, w, h) {
			t.Fatalf("screenshot is %v, want %dx%d", img.Bounds(), w, h)
		}
		rgba, ok := img.(*image.RGBA)
		if !ok {
			rgba = image.NewRGBA(img.Bounds())
			for y := 0; y < h; y++ {
				for x := 0; x < w; x++ {
					rgba.Set(x, y, img.At(x, y))
				}
			}
		}
		return rgba
	}

	t.Run("BadInput", func(t *testing.T) {
		_, err := c.StartDesktop(ctx, sb.ID, sdk.DesktopStartRequest{Width: 800, Height: 600})
		wantCode(t, err, string(sdk.CodeDesktopRunning))
		wantCode(t, c.PressKey(ctx, sb.ID, "ctrl+notakey"), string(sdk.CodeUnknownKey))
		wantCode(t, c.PressKey(ctx, sb.ID, "hyper+a"), string(sdk.CodeUnknownKey))
		_, err = c.MoveMouse(ctx, sb.ID, w, 10)
		wantCode(t, err, string(sdk.CodeOffScreen))
		x, y := -1, 5
		_, err = c.Click(ctx, sb.ID, sdk.MouseClickRequest{X: &x, Y: &y})
		wantCode(t, err, string(sdk.CodeOffScreen))
		_, err = c.Screenshot(ctx, sb.ID, sdk.ScreenshotOptions{X: w - 10, Y: 0, Width: 20, Height: 20})
		wantCode(t, err, string(sdk.CodeOffScreen))
		_, err = c.Screenshot(ctx, sb.ID, sdk.ScreenshotOptions{Format: "gif"})
		wantCode(t, err, string(sdk.CodeInvalidDesktopInput))
		wantCode(t, c.FocusWindow(ctx, sb.ID, "12345"), string(sdk.CodeWindowNotFound))
		var ae *sdk.APIError
		if err := c.TypeText(ctx, sb.ID, ""); !errors.As(err, &ae) || ae.StatusCode != 400 {
			t.Fatalf("empty text: %v, want a 400", err)
		}
	})

	t.Run("Mouse", func(t *testing.T) {
		p, err := c.MoveMouse(ctx, sb.ID, 123, 456)
		if err != nil || p.X != 123 || p.Y != 456 {
			t.Fatalf("move: %+v, %v", p, err)
		}
		p, err = c.CursorPosition(ctx, sb.ID)
		if err != nil || p.X != 123 || p.Y != 456 {
			t.Fatalf("position after move: %+v, %v", p, err)
		}
	})

	t.Run("TerminalTyping", func(t *testing.T) {
		before := shot(t)
		if _, err := c.Launch(ctx, sb.ID, sdk.LaunchRequest{Cmd: []string{"xterm", "-title", "sbx-term"}}); err != nil {
			t.Fatalf("launch xterm: %v", err)
		}
		var term sdk.DesktopWindow
		waitFor(t, 30*time.Second, "the terminal's window", func() bool {
			list, err := c.ListWindows(ctx, sb.ID)
			if err != nil {
				t.Fatalf("list windows: %v", err)
			}
			for _, win := range list {
				if win.Title == "sbx-term" && win.Width > 0 {
					term = win
					return true
				}
			}
			return false
		})
		if err := c.FocusWindow(ctx, sb.ID, term.ID); err != nil {
			t.Fatalf("focus the terminal: %v", err)
		}
		waitFor(t, 10*time.Second, "the terminal to have focus", func() bool {
			list, _ := c.ListWindows(ctx, sb.ID)
			for _, win := range list {
				if win.ID == term.ID {
					return win.Focused
				}
			}
			return false
		})
		if err := c.TypeText(ctx, sb.ID, "echo 42 > /tmp/typed"); err != nil {
			t.Fatalf("type: %v", err)
		}
		if err := c.PressKey(ctx, sb.ID, "Return"); err != nil {
			t.Fatalf("press Return: %v", err)
		}
		waitFor(t, 10*time.Second, "/tmp/typed to hold 42", func() bool {
			res, err := c.Exec(ctx, sb.ID, sdk.ExecRequest{Cmd: []string{"cat", "/tmp/typed"}})
			return err == nil && res.Stdout == "42\n"
		})
		after := shot(t)
		if bytes.Equal(before.Pix, after.Pix) {
			t.Fatal("the screenshot did not change after a terminal opened and text was typed")
		}
		b, err := c.Screenshot(ctx, sb.ID, sdk.ScreenshotOptions{Format: "jpeg", Quality: 50, Cursor: true, X: term.X, Y: term.Y, Width: 100, Height: 50})
		if err != nil {
			t.Fatalf("jpeg region: %v", err)
		}
		if img, err := jpeg.Decode(bytes.NewReader(b)); err != nil || img.Bounds().Dx() != 100 || img.Bounds().Dy() != 50 {
			t.Fatalf("jpeg region: %v, %v", img.Bounds(), err)
		}
	})

	t.Run("NoVNCView", func(t *testing.T) {
		view, err := c.DesktopView(ctx, sb.ID, sdk.DesktopViewRequest{})
		if err != nil {
			t.Fatalf("desktop view: %v", err)
		}
		if !strings.Contains(view.URL, "sbx_token="+view.Port.Token) || view.Port.Public {
			t.Fatalf("view %+v: want a private port whose token is in the URL", view)
		}
		_, port, _ := net.SplitHostPort(d.addr)
		connected := openNoVNC(t, view.URL, port)
		if !connected {
			t.Fatal("noVNC did not reach the connected state")
		}
	})

	// Class gvisor runs the desktop too, and a paused desktop comes back
	// with the same programs, windows and pointer. (This host's runsc of
	// 2022 does not open an xterm: its child spins before the shell.)
	t.Run("GVisorPauseResume", func(t *testing.T) {
		if _, err := exec.LookPath("runsc"); err != nil {
			t.Skip("needs runsc (apt-get install runsc)")
		}
		g := d.create(sdk.CreateSandboxRequest{Name: "gdesk", Image: "desktop", Class: "gvisor", MemoryMiB: 1024})
		before, err := c.StartDesktop(ctx, g.ID, sdk.DesktopStartRequest{Width: 640, Height: 480})
		if err != nil {
			t.Fatalf("start a gvisor desktop: %v", err)
		}
		if _, err := c.MoveMouse(ctx, g.ID, 10, 20); err != nil {
			t.Fatalf("move: %v", err)
		}
		var panel sdk.DesktopWindow
		waitFor(t, 30*time.Second, "the panel's window", func() bool {
			list, err := c.ListWindows(ctx, g.ID)
			if err == nil && len(list) > 0 {
				panel = list[0]
			}
			return err == nil && len(list) > 0
		})
		if _, err := c.PauseSandbox(ctx, g.ID); err != nil {
			t.Fatalf("pause: %v", err)
		}
		if _, err := c.ResumeSandbox(ctx, g.ID); err != nil {
			t.Fatalf("resume: %v", err)
		}
		after, err := c.DesktopStatus(ctx, g.ID)
		if err != nil || !after.Running || len(after.Programs) != len(before.Programs) {
			t.Fatalf("status after resume: %+v, %v", after, err)
		}
		for i, p := range after.Programs {
			if p.Pid != before.Programs[i].Pid || p.Restarts != 0 || !p.Running {
				t.Errorf("%s after resume: %+v, before %+v", p.Name, p, before.Programs[i])
			}
		}
		list, err := c.ListWindows(ctx, g.ID)
		if err != nil || len(list) == 0 || list[0].ID != panel.ID {
			t.Errorf("windows after resume: %+v, %v; want %+v", list, err, panel)
		}
		if p, err := c.CursorPosition(ctx, g.ID); err != nil || p.X != 10 || p.Y != 20 {
			t.Errorf("pointer after resume: %+v, %v", p, err)
		}
		b, err := c.Screenshot(ctx, g.ID, sdk.ScreenshotOptions{})
		if err != nil {
			t.Fatalf("screenshot after resume: %v", err)
		}
		if img, err := png.Decode(bytes.NewReader(b)); err != nil || img.Bounds() != image.Rect(0, 0, 640, 480) {
			t.Fatalf("screenshot after resume: %v", err)
		}
	})

	t.Run("Stop", func(t *testing.T) {
		st, err := c.StopDesktop(ctx, sb.ID)
		if err != nil || st.Running {
			t.Fatalf("stop: %+v, %v", st, err)
		}
		res, err := c.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: "ls /tmp/.X11-unix; pgrep -x Xvfb || echo none"})
		if err != nil || !strings.HasSuffix(res.Stdout, "none\n") {
			t.Fatalf("after stop: %+v, %v", res, err)
		}
	})
}

// openNoVNC loads the noVNC page in headless Chromium, with the preview
// domain resolved to the daemon, waits for it to connect and saves a
// screenshot of the page under the artifacts directory.
func openNoVNC(t *testing.T, pageURL, daemonPort string) bool {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath("/usr/bin/chromium"),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("host-resolver-rules", "MAP *.preview.test 127.0.0.1:"+daemonPort),
		chromedp.WindowSize(1100, 850),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	// The first Run starts the browser and must not carry a timeout (it
	// would end the browser); later ones do. A cold first load of noVNC's
	// forty-odd modules from websockify's small web server sometimes loses
	// a module fetch in Chromium (status 0, the page stays "loading"); a
	// person would reload, and so does this, twice at most.
	pctx, cancel := context.WithTimeout(bctx, 120*time.Second)
	defer cancel()
	connected := false
	for attempt := 1; attempt <= 3 && !connected; attempt++ {
		ctx := pctx
		if attempt == 1 {
			ctx = bctx
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(pageURL)); err != nil {
			t.Fatalf("load the noVNC page: %v", err)
		}
		var err error
		connected, err = chromedp.Run(pctx, chromedp.Poll[bool](`document.documentElement.classList.contains("noVNC_connected")`, chromedp.WithPollingTimeout(20*time.Second)))
		if err != nil {
			state, _ := chromedp.Run(pctx, chromedp.Evaluate[string](`document.documentElement.className + ": " + ((document.getElementById("noVNC_status") || {}).textContent || "")`))
			t.Logf("noVNC load %d did not connect: %v (page state %q)", attempt, err, state)
		}
	}
	if !connected {
		return false
	}
	png, err := chromedp.Run(pctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot of the noVNC page: %v", err)
	}
	dir := os.Getenv("SBX_ARTIFACTS_DIR")
	if dir == "" {
		dir = filepath.Join("..", "artifacts")
	}
	dir = filepath.Join(dir, "desktop")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "novnc.png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("noVNC screenshot: %s", file)
	return connected
}
