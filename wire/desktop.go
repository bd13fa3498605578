package wire

import "time"

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

// DesktopProgramLogs is a desktop program's output since it last started
// (the last MiB of each stream).
type DesktopProgramLogs struct {
	// What it wrote to standard output.
	Stdout string `json:"stdout"`
	// What it wrote to standard error.
	Stderr string `json:"stderr"`
}
