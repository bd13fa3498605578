package integration

import (
	"bytes"
	"image"
	"image/png"
	"strings"
	"testing"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPDesktop: the desktop tools on the desktop image over /mcp: start,
// a screenshot as PNG image content of the screen's size, click, type, key
// and scroll (what each does to the screen: TestDesktop).
func TestMCPDesktop(t *testing.T) {
	d := startDaemon(t)
	importDesktop(t, d)
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

// TestMCPCodeChart: code_run on the python image returns a matplotlib chart
// as PNG image content and a pandas table as HTML, beside the text.
func TestMCPCodeChart(t *testing.T) {
	d := startDaemon(t)
	importPython(t, d)
	cs := mcpHTTP(t, d, d.token)
	mcpTool(t, cs, "sandbox_create", map[string]any{"name": "py", "image": "python", "memoryMiB": 1024})
	code := "import pandas as pd, matplotlib.pyplot as plt\nprint('plotting')\nplt.plot([1, 2, 3], [1, 4, 9])\nplt.show()\npd.DataFrame({'a': [1, 2]})"
	out, res := mcpToolText(t, cs, "code_run", map[string]any{"sandbox": "py", "code": code})
	if res.IsError {
		t.Fatalf("code_run: %s", out)
	}
	var pngs int
	for _, c := range res.Content {
		if img, ok := c.(*gomcp.ImageContent); ok && img.MIMEType == "image/png" {
			if _, err := png.Decode(bytes.NewReader(img.Data)); err != nil {
				t.Errorf("the chart is not a PNG: %v", err)
			}
			pngs++
		}
	}
	if pngs != 1 || !strings.Contains(out, "--- stdout ---\nplotting") || !strings.Contains(out, "result (text/html):\n<div>") {
		t.Errorf("code_run: %d PNG images, text %q", pngs, out)
	}
}
