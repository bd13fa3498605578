package integration

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"testing"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPDesktop: the desktop tools on the desktop image over /mcp: start,
// a screenshot as PNG image content of the screen's size, click, type, key
// and scroll (what each does to the screen: TestDesktop).
func TestMCPDesktop(t *testing.T) {
	d := startDaemon(t)
	f, err := os.Open(desktopImageTar(t))
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.client.ImportImage(context.Background(), "desktop", f)
	f.Close()
	if err != nil {
		t.Fatalf("import the desktop image: %v", err)
	}
	cs := mcpHTTP(t, d, d.token)
	mcpTool(t, cs, "sandbox_create", map[string]any{"name": "desk", "image": "desktop", "memoryMiB": 1024})
	mcpTool(t, cs, "desktop_start", map[string]any{"sandbox": "desk", "width": 800, "height": 600}, `"running": true`)
	_, res := mcpToolText(t, cs, "desktop_screenshot", map[string]any{"sandbox": "desk"})
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("desktop_screenshot: %+v", res)
	}
	img, ok := res.Content[0].(*gomcp.ImageContent)
	if !ok || img.MIMEType != "image/png" {
		t.Fatalf("desktop_screenshot gave %T, want PNG image content", res.Content[0])
	}
	pic, err := png.Decode(bytes.NewReader(img.Data))
	if err != nil || pic.Bounds() != image.Rect(0, 0, 800, 600) {
		t.Fatalf("the screenshot: %v, %v", err, pic)
	}
	mcpTool(t, cs, "desktop_click", map[string]any{"sandbox": "desk", "x": 400, "y": 300}, "clicked at 400,300")
	mcpTool(t, cs, "desktop_type", map[string]any{"sandbox": "desk", "text": "hello"}, "typed 5 characters")
	mcpTool(t, cs, "desktop_key", map[string]any{"sandbox": "desk", "key": "Return"}, "pressed Return")
	mcpTool(t, cs, "desktop_scroll", map[string]any{"sandbox": "desk", "direction": "down", "amount": 2}, "scrolled down")
	mcpToolFails(t, cs, "desktop_scroll", map[string]any{"sandbox": "desk", "direction": "sideways"}, "INVALID_DESKTOP_INPUT")
}
