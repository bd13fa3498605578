package mcp

import (
	"context"
	"fmt"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sbxhq/sbx/sdk"
	"github.com/sbxhq/sbx/wire"
)

// DesktopStartInput is desktop_start's input.
type DesktopStartInput struct {
	Target
	wire.DesktopStartRequest
}

// ScreenshotInput is desktop_screenshot's input.
type ScreenshotInput struct {
	Target
	Cursor bool `json:"cursor,omitempty" jsonschema:"draw the mouse pointer"`
}

// ClickInput is desktop_click's input.
type ClickInput struct {
	Target
	X      int    `json:"x" jsonschema:"pixels from the left"`
	Y      int    `json:"y" jsonschema:"pixels from the top"`
	Button string `json:"button,omitempty" jsonschema:"left (default), middle or right"`
	Double bool   `json:"double,omitempty" jsonschema:"double-click"`
}

// TypeInput is desktop_type's input.
type TypeInput struct {
	Target
	Text string `json:"text" jsonschema:"text to type into the focused window"`
}

// KeyInput is desktop_key's input.
type KeyInput struct {
	Target
	Key string `json:"key" jsonschema:"a key or chord: Return, Tab, Escape, ctrl+c, alt+F4, …"`
}

// ScrollInput is desktop_scroll's input.
type ScrollInput struct {
	Target
	wire.MouseScrollRequest
}

func (r registry) desktopTools() {
	tool(r, "desktop_start", "Start the sandbox's graphical desktop (X server, window manager) for computer use; the image must have one (e.g. the desktop image).", true,
		map[string]string{"width": "screen width in pixels", "height": "screen height in pixels", "depth": "bits per pixel: 16 or 24"},
		func(ctx context.Context, c *sdk.Client, in DesktopStartInput) (*gomcp.CallToolResult, error) {
			return jsonResult(c.StartDesktop(ctx, in.Sandbox, in.DesktopStartRequest))
		})
	tool(r, "desktop_screenshot", "Take a screenshot of the sandbox's desktop, returned as a PNG image.", false, nil,
		func(ctx context.Context, c *sdk.Client, in ScreenshotInput) (*gomcp.CallToolResult, error) {
			png, err := c.Screenshot(ctx, in.Sandbox, sdk.ScreenshotOptions{Cursor: in.Cursor})
			if err != nil {
				return nil, err
			}
			return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.ImageContent{Data: png, MIMEType: "image/png"}}}, nil
		})
	tool(r, "desktop_click", "Click at a point of the desktop.", true, nil,
		func(ctx context.Context, c *sdk.Client, in ClickInput) (*gomcp.CallToolResult, error) {
			p, err := c.Click(ctx, in.Sandbox, wire.MouseClickRequest{X: &in.X, Y: &in.Y, Button: in.Button, Double: in.Double})
			if err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("clicked at %d,%d", p.X, p.Y)), nil
		})
	tool(r, "desktop_type", "Type text on the desktop's focused window.", true, nil,
		func(ctx context.Context, c *sdk.Client, in TypeInput) (*gomcp.CallToolResult, error) {
			if err := c.TypeText(ctx, in.Sandbox, in.Text); err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("typed %d characters", len([]rune(in.Text)))), nil
		})
	tool(r, "desktop_key", "Press a key or chord on the desktop.", true, nil,
		func(ctx context.Context, c *sdk.Client, in KeyInput) (*gomcp.CallToolResult, error) {
			if err := c.PressKey(ctx, in.Sandbox, in.Key); err != nil {
				return nil, err
			}
			return text("pressed " + in.Key), nil
		})
	tool(r, "desktop_scroll", "Scroll the mouse wheel on the desktop, at a point or where the pointer is.", true,
		map[string]string{"x": "pixels from the left; default where the pointer is", "y": "pixels from the top", "direction": "up, down, left or right", "amount": "wheel clicks; default 1"},
		func(ctx context.Context, c *sdk.Client, in ScrollInput) (*gomcp.CallToolResult, error) {
			p, err := c.Scroll(ctx, in.Sandbox, in.MouseScrollRequest)
			if err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("scrolled %s at %d,%d", in.Direction, p.X, p.Y)), nil
		})
}
