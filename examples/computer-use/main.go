// Command computer-use drives a desktop in a sandbox the way a computer-use
// agent does: start the desktop, open a page in the browser inside the
// sandbox, take a screenshot, click, type, take another screenshot.
//
//	SBX_HOST=http://127.0.0.1:7423 SBX_TOKEN=… go run ./examples/computer-use -out shots
//
// It needs the desktop image (scripts/build-desktop-image.sh --import). No
// model is called: the actions are scripted in next below. See README.md.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// page is what the browser opens: one big text box. Whatever is typed into
// it becomes the page's title, which is the browser window's title, so the
// program can read back what arrived.
const page = `<!doctype html>
<title>sbx example page</title>
<style>
  body { margin: 0; font: 32px sans-serif; background: #f4f1ea; }
  h1 { position: fixed; top: 20px; left: 40px; margin: 0; font-size: 40px; }
  input { position: fixed; top: 120px; left: 40px; right: 40px; height: 200px; font-size: 48px; border: 4px solid #333; }
</style>
<h1>Type below</h1>
<input id="box" oninput="document.title = 'typed: ' + this.value">
`

const (
	width, height = 1024, 768
	text          = "hello from sbx"
)

// Action is one computer-use tool call, as a model would emit it.
type Action struct {
	Kind string // "screenshot", "click", "type"
	X, Y int    // click
	Text string // type
}

// next is the stand-in for the model: given what happened so far (the
// screenshots taken, the browser window), it says what to do next, or nil
// when done. A real agent sends the last screenshot (PNG) and the task to
// the model and turns its answer (click at x,y; type "…") into an Action.
func next(step int, win sdk.DesktopWindow) *Action {
	switch step {
	case 0:
		return &Action{Kind: "screenshot"}
	case 1: // the text box is 120 to 328 px below the page's top, which is
		// the window's top or, with chromium's info bar, about 60 px lower
		return &Action{Kind: "click", X: win.X + win.Width/2, Y: win.Y + 250}
	case 2:
		return &Action{Kind: "type", Text: text}
	case 3:
		return &Action{Kind: "screenshot"}
	}
	return nil
}

func main() {
	image := flag.String("image", "desktop", "image with the desktop programs and chromium (scripts/build-desktop-image.sh --import)")
	out := flag.String("out", ".", "directory for the screenshots")
	keep := flag.Bool("keep", false, "keep the sandbox afterwards (open its desktop with `sbx desktop view`)")
	flag.Parse()
	log.SetFlags(0)
	if err := run(context.Background(), *image, *out, *keep); err != nil {
		log.Fatalf("computer-use: %v", err)
	}
}

func run(ctx context.Context, image, out string, keep bool) error {
	c, err := sdk.FromEnv()
	if err != nil {
		return err
	}
	sb, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{Image: image, MemoryMiB: 2048, Labels: map[string]string{"example": "computer-use"}})
	if err != nil {
		return fmt.Errorf("create a sandbox of image %q: %w", image, err)
	}
	fmt.Printf("sandbox %s (image %s)\n", sb.ID, image)
	if !keep {
		defer c.DeleteSandbox(context.Background(), sb.ID, true)
	}
	box := sb.ID
	if _, err := c.StartDesktop(ctx, box, sdk.DesktopStartRequest{Width: width, Height: height}); err != nil {
		return fmt.Errorf("start the desktop: %w", err)
	}
	if _, err := c.Upload(ctx, box, "/tmp/page.html", strings.NewReader(page), 0o644); err != nil {
		return err
	}
	if _, err := c.Launch(ctx, box, sdk.LaunchRequest{Cmd: []string{
		"chromium", "--app=file:///tmp/page.html", "--user-data-dir=/tmp/chromium",
		"--window-position=0,0", fmt.Sprintf("--window-size=%d,%d", width, height),
	}}); err != nil {
		return fmt.Errorf("open the browser: %w", err)
	}
	win, err := waitWindow(ctx, c, box, "sbx example page", 2*time.Minute)
	if err != nil {
		return err
	}
	fmt.Printf("browser window %q at %d,%d, %dx%d\n", win.Title, win.X, win.Y, win.Width, win.Height)

	shots := 0
	for step := 0; ; step++ {
		a := next(step, win)
		if a == nil {
			break
		}
		switch a.Kind {
		case "screenshot":
			png, err := c.Screenshot(ctx, box, sdk.ScreenshotOptions{})
			if err != nil {
				return err
			}
			shots++
			file := filepath.Join(out, fmt.Sprintf("shot-%d.png", shots))
			if err := os.WriteFile(file, png, 0o644); err != nil {
				return err
			}
			fmt.Printf("screenshot: %s (%d bytes)\n", file, len(png))
		case "click":
			if _, err := c.Click(ctx, box, sdk.MouseClickRequest{X: &a.X, Y: &a.Y}); err != nil {
				return err
			}
			fmt.Printf("click at %d,%d\n", a.X, a.Y)
		case "type":
			if err := c.TypeText(ctx, box, a.Text); err != nil {
				return err
			}
			fmt.Printf("typed %q\n", a.Text)
			// What arrived in the page: its title follows the text box.
			if win, err = waitWindow(ctx, c, box, "typed: "+a.Text, 30*time.Second); err != nil {
				return err
			}
			fmt.Printf("page title: %s\n", win.Title)
		}
	}
	if shots >= 2 {
		first, _ := os.ReadFile(filepath.Join(out, "shot-1.png"))
		last, _ := os.ReadFile(filepath.Join(out, fmt.Sprintf("shot-%d.png", shots)))
		fmt.Printf("first and last screenshots differ: %v\n", !bytes.Equal(first, last))
	}
	return nil
}

// waitWindow waits for a window whose title starts with title.
func waitWindow(ctx context.Context, c *sdk.Client, box, title string, timeout time.Duration) (sdk.DesktopWindow, error) {
	deadline := time.Now().Add(timeout)
	var seen []string
	for time.Now().Before(deadline) {
		list, err := c.ListWindows(ctx, box)
		if err != nil {
			return sdk.DesktopWindow{}, err
		}
		seen = seen[:0]
		for _, w := range list {
			if strings.HasPrefix(w.Title, title) && w.Width > 0 {
				return w, nil
			}
			seen = append(seen, w.Title)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return sdk.DesktopWindow{}, fmt.Errorf("no window titled %q after %s (windows: %q)", title, timeout, seen)
}
