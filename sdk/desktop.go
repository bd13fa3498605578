package sdk

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// A desktop is a virtual X display in a sandbox, with a window manager,
// a panel, a VNC server and noVNC, that the sandbox's agent starts and
// supervises (restarted when one crashes, stopped with the sandbox). It needs
// an image with those programs (scripts/build-desktop-image.sh builds one):
// Xvfb, openbox, tint2 (optional), x11vnc, websockify + noVNC, xdotool.

// Desktop defaults and bounds.
const (
	DesktopDisplay    = ":99" // the X display of the desktop (DISPLAY in launched apps)
	DesktopVNCPort    = 5900  // x11vnc, on 127.0.0.1 inside the sandbox
	DesktopNoVNCPort  = 6080  // noVNC page and its WebSocket bridge; what the view exposes
	DesktopMinSize    = 64    // smallest width or height
	DesktopMaxSize    = 7680  // largest width or height
	DesktopDefaultW   = 1280
	DesktopDefaultH   = 800
	DesktopDefaultBPP = 24
)

// DesktopStartRequest is the body of POST …/desktop/start. Zero values take
// the defaults (1280×800, depth 24). Starting a running desktop with the same
// size is a no-op; another size is 409 DESKTOP_RUNNING.
type DesktopStartRequest struct {
	// Screen width in pixels. Default: 1280.
	Width int `json:"width,omitempty"`
	// Screen height in pixels. Default: 800.
	Height int `json:"height,omitempty"`
	Depth  int `json:"depth,omitempty"` // bits per pixel: 16 or 24. Default: 24.
}

// DesktopProgram is one supervised program of a desktop.
type DesktopProgram struct {
	Name string `json:"name"` // "xvfb", "wm", "panel", "vnc", "novnc"
	// Its process id inside the sandbox, while it runs.
	Pid int `json:"pid,omitempty"`
	// Whether it runs now.
	Running  bool `json:"running"`
	Restarts int  `json:"restarts"` // times it was restarted after it exited
}

// DesktopStatus describes a sandbox's desktop (start, stop, status).
type DesktopStatus struct {
	// Whether the desktop runs.
	Running bool `json:"running"`
	// The X display programs use, e.g. ":99" (DISPLAY).
	Display string `json:"display,omitempty"`
	// Screen width in pixels.
	Width int `json:"width,omitempty"`
	// Screen height in pixels.
	Height int `json:"height,omitempty"`
	// Bits per pixel: 16 or 24.
	Depth     int `json:"depth,omitempty"`
	NoVNCPort int `json:"novncPort,omitempty"` // expose it, or use POST …/desktop/view
	// When the desktop was started.
	StartedAt *time.Time `json:"startedAt,omitempty"`
	// The programs the agent supervises for it: Xvfb, window manager, panel, VNC, noVNC.
	Programs []DesktopProgram `json:"programs,omitempty"`
}

// DesktopPoint is a position on the screen, in pixels from the top left.
type DesktopPoint struct {
	// Pixels from the screen's left edge.
	X int `json:"x"`
	// Pixels from the screen's top edge.
	Y int `json:"y"`
}

// Mouse buttons.
const (
	MouseLeft   = "left"
	MouseMiddle = "middle"
	MouseRight  = "right"
)

// MouseMoveRequest moves the pointer (POST …/desktop/mouse/move).
type MouseMoveRequest struct {
	// Pixels from the screen's left edge.
	X int `json:"x"`
	// Pixels from the screen's top edge.
	Y int `json:"y"`
}

// MouseClickRequest clicks a button (POST …/desktop/mouse/click), at X,Y
// when both are set, else where the pointer is.
type MouseClickRequest struct {
	// Where to click, in pixels from the left edge; with y. Absent: where the pointer is.
	X *int `json:"x,omitempty"`
	// Where to click, in pixels from the top edge; with x. Absent: where the pointer is.
	Y      *int   `json:"y,omitempty"`
	Button string `json:"button,omitempty"` // left, middle or right. Default: "left".
	// Click twice (a double-click). Default: false.
	Double bool `json:"double,omitempty"`
}

// MouseDragRequest presses a button at From, moves to To and releases it
// (POST …/desktop/mouse/drag).
type MouseDragRequest struct {
	// Where the button is pressed.
	From DesktopPoint `json:"from"`
	// Where it is released.
	To     DesktopPoint `json:"to"`
	Button string       `json:"button,omitempty"` // left, middle or right. Default: "left".
}

// MouseScrollRequest turns the wheel (POST …/desktop/mouse/scroll), at X,Y
// when both are set.
type MouseScrollRequest struct {
	// Where to scroll, in pixels from the left edge; with y. Absent: where the pointer is.
	X *int `json:"x,omitempty"`
	// Where to scroll, in pixels from the top edge; with x. Absent: where the pointer is.
	Y         *int   `json:"y,omitempty"`
	Direction string `json:"direction"`        // up, down, left, right
	Amount    int    `json:"amount,omitempty"` // wheel clicks, at most 100. Default: 1.
}

// TypeTextRequest types text as key presses (POST …/desktop/keyboard/type).
// Any Unicode text works; "\n" presses Return.
type TypeTextRequest struct {
	// The text to type, any Unicode; "\n" presses Return.
	Text    string `json:"text"`
	DelayMs int    `json:"delayMs,omitempty"` // milliseconds between keys, at most 1000. Default: 12.
}

// PressKeyRequest presses a key or a chord (POST …/desktop/keyboard/press):
// "Return", "a", "ctrl+c", "alt+tab", "ctrl+shift+t". Modifiers: ctrl, shift,
// alt, super (meta, win, cmd). Keys: a single character or an X keysym name
// (Return/Enter, Escape/Esc, Tab, BackSpace, Delete, Home, End, Page_Up,
// Page_Down, Up, Down, Left, Right, space, F1…F24, …). An unknown name is
// 400 UNKNOWN_KEY.
type PressKeyRequest struct {
	// A key or chord, X keysym names joined by "+": "Return", "ctrl+c", "alt+tab", "F5".
	Key string `json:"key"`
}

// DesktopWindow is a top-level window on the desktop.
type DesktopWindow struct {
	ID string `json:"id"` // X window id, decimal
	// The window's title.
	Title string `json:"title"`
	// Its left edge, in pixels from the screen's.
	X int `json:"x"`
	// Its top edge, in pixels from the screen's.
	Y int `json:"y"`
	// Its width in pixels.
	Width int `json:"width"`
	// Its height in pixels.
	Height int `json:"height"`
	// It has the keyboard focus.
	Focused bool `json:"focused"`
}

// LaunchRequest starts an application on the desktop
// (POST …/desktop/launch) as a background process with DISPLAY set; it is
// listed with the sandbox's processes. Exactly one of Cmd and Shell.
type LaunchRequest struct {
	// The program and its arguments, run without a shell.
	Cmd []string `json:"cmd,omitempty"`
	// A command line run with /bin/sh -c (instead of cmd).
	Shell string `json:"shell,omitempty"`
	// Variables added to the environment (DISPLAY is set).
	Env map[string]string `json:"env,omitempty"`
	// Run as this account of the sandbox's /etc/passwd (a name, or uid[:gid]). By default root.
	User string `json:"user,omitempty"`
}

// DesktopViewRequest makes the noVNC view reachable
// (POST …/desktop/view). Private by default: the URL carries the port's
// token, or a signature when ExpiresInSeconds is set.
type DesktopViewRequest struct {
	Public           bool `json:"public,omitempty"`           // anyone with the URL, no token
	ExpiresInSeconds int  `json:"expiresInSeconds,omitempty"` // a signed URL valid this long instead of the token
}

// DesktopView is the noVNC page of a desktop: open URL in a browser or an
// iframe; it connects by itself.
type DesktopView struct {
	// The noVNC page's URL: with the port's token, or signed until expiresAt, or bare for a public
	// port.
	URL       string     `json:"url"`
	Port      Port       `json:"port"`                // the exposed noVNC port
	ExpiresAt *time.Time `json:"expiresAt,omitempty"` // for a signed URL
}

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

// DesktopProgramLogs is a desktop program's output since it last started
// (the last MiB of each stream).
type DesktopProgramLogs struct {
	// What it wrote to standard output.
	Stdout string `json:"stdout"`
	// What it wrote to standard error.
	Stderr string `json:"stderr"`
}
