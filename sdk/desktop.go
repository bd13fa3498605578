package sdk

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
)

// A desktop is a virtual X display in a sandbox, with a window manager,
// a panel, a VNC server and noVNC, that the sandbox's agent starts and
// supervises (restarted when one crashes, stopped with the sandbox). It needs
// an image with those programs (scripts/build-desktop-image.sh builds one):
// Xvfb, openbox, tint2 (optional), x11vnc, websockify + noVNC, xdotool.

// ScreenshotOptions selects what GET …/desktop/screenshot returns. A zero
// value is a PNG of the whole screen without the pointer.
type ScreenshotOptions struct {
	Format  string // "png" (default) or "jpeg"
	Quality int    // jpeg quality 1-100, default 80
	Cursor  bool   // draw the pointer
	// Region, when Width and Height are set: only this rectangle.
	X, Y, Width, Height int
}

func (o ScreenshotOptions) query() url.Values {
	q := url.Values{}
	if o.Format != "" {
		q.Set("format", o.Format)
	}
	if o.Quality != 0 {
		q.Set("quality", strconv.Itoa(o.Quality))
	}
	if o.Cursor {
		q.Set("cursor", "true")
	}
	if o.Width != 0 || o.Height != 0 {
		q.Set("x", strconv.Itoa(o.X))
		q.Set("y", strconv.Itoa(o.Y))
		q.Set("width", strconv.Itoa(o.Width))
		q.Set("height", strconv.Itoa(o.Height))
	}
	return q
}

// desktopCall sends in (when not nil) to …/desktop+suffix and decodes the
// answer into out (when not nil).
func (c *Client) desktopCall(ctx context.Context, method, idOrName, suffix string, in, out any) error {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return err
	}
	return c.call(ctx, request{method: method, path: sandboxPath(idOrName, "/desktop"+suffix), in: in}, out)
}

// desktopDo is desktopCall that answers a *T, nil on error.
func desktopDo[T any](c *Client, ctx context.Context, method, idOrName, suffix string, in any) (*T, error) {
	var out T
	if err := c.desktopCall(ctx, method, idOrName, suffix, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// StartDesktop starts the sandbox's desktop and returns once the X display
// accepts connections.
func (c *Client) StartDesktop(ctx context.Context, idOrName string, req DesktopStartRequest) (*DesktopStatus, error) {
	return desktopDo[DesktopStatus](c, ctx, http.MethodPost, idOrName, "/start", req)
}

// StopDesktop stops every program of the desktop (applications launched on
// it lose their display).
func (c *Client) StopDesktop(ctx context.Context, idOrName string) (*DesktopStatus, error) {
	return desktopDo[DesktopStatus](c, ctx, http.MethodPost, idOrName, "/stop", nil)
}

// DesktopStatus reports whether the desktop runs, its size and programs.
func (c *Client) DesktopStatus(ctx context.Context, idOrName string) (*DesktopStatus, error) {
	return desktopDo[DesktopStatus](c, ctx, http.MethodGet, idOrName, "/status", nil)
}

// Screenshot returns the screen as an image (PNG unless opts say jpeg).
func (c *Client) Screenshot(ctx context.Context, idOrName string, opts ScreenshotOptions) ([]byte, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	resp, err := c.send(ctx, request{method: http.MethodGet, path: sandboxPath(idOrName, "/desktop/screenshot"), query: opts.query()})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read screenshot: %w", err)
	}
	return b, nil
}

// CursorPosition returns where the pointer is.
func (c *Client) CursorPosition(ctx context.Context, idOrName string) (*DesktopPoint, error) {
	return desktopDo[DesktopPoint](c, ctx, http.MethodGet, idOrName, "/mouse", nil)
}

// MoveMouse moves the pointer; it answers the new position.
func (c *Client) MoveMouse(ctx context.Context, idOrName string, x, y int) (*DesktopPoint, error) {
	return desktopDo[DesktopPoint](c, ctx, http.MethodPost, idOrName, "/mouse/move", MouseMoveRequest{X: x, Y: y})
}

// Click clicks a mouse button.
func (c *Client) Click(ctx context.Context, idOrName string, req MouseClickRequest) (*DesktopPoint, error) {
	return desktopDo[DesktopPoint](c, ctx, http.MethodPost, idOrName, "/mouse/click", req)
}

// Drag drags with a button held from one point to another.
func (c *Client) Drag(ctx context.Context, idOrName string, req MouseDragRequest) (*DesktopPoint, error) {
	return desktopDo[DesktopPoint](c, ctx, http.MethodPost, idOrName, "/mouse/drag", req)
}

// Scroll turns the mouse wheel.
func (c *Client) Scroll(ctx context.Context, idOrName string, req MouseScrollRequest) (*DesktopPoint, error) {
	return desktopDo[DesktopPoint](c, ctx, http.MethodPost, idOrName, "/mouse/scroll", req)
}

// TypeText types text on the focused window.
func (c *Client) TypeText(ctx context.Context, idOrName, text string) error {
	return c.desktopCall(ctx, http.MethodPost, idOrName, "/keyboard/type", TypeTextRequest{Text: text}, nil)
}

// PressKey presses a key or chord such as "Return" or "ctrl+c".
func (c *Client) PressKey(ctx context.Context, idOrName, key string) error {
	return c.desktopCall(ctx, http.MethodPost, idOrName, "/keyboard/press", PressKeyRequest{Key: key}, nil)
}

// ListWindows lists the desktop's visible top-level windows.
func (c *Client) ListWindows(ctx context.Context, idOrName string) ([]DesktopWindow, error) {
	list, err := desktopDo[[]DesktopWindow](c, ctx, http.MethodGet, idOrName, "/windows", nil)
	if err != nil {
		return nil, err
	}
	return *list, nil
}

// FocusWindow raises and focuses a window by id.
func (c *Client) FocusWindow(ctx context.Context, idOrName, windowID string) error {
	if err := checkName("window id", windowID); err != nil {
		return err
	}
	return c.desktopCall(ctx, http.MethodPost, idOrName, "/windows/"+url.PathEscape(windowID)+"/focus", nil, nil)
}

// Launch starts an application on the desktop as a background process.
func (c *Client) Launch(ctx context.Context, idOrName string, req LaunchRequest) (*Process, error) {
	return desktopDo[Process](c, ctx, http.MethodPost, idOrName, "/launch", req)
}

// DesktopView exposes the desktop's noVNC page and returns its URL.
func (c *Client) DesktopView(ctx context.Context, idOrName string, req DesktopViewRequest) (*DesktopView, error) {
	return desktopDo[DesktopView](c, ctx, http.MethodPost, idOrName, "/view", req)
}
