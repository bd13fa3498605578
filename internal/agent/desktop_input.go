package agent

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Input goes through xdotool (XTEST): it maps any keysym or Unicode
// character to a keycode, which a hand-written client would have to
// reimplement. One short-lived process per call (a few milliseconds; see
// bench/desktop.go). Arguments are validated here first, so a bad key or
// an off-screen point is a clear 400 rather than an xdotool warning.

// maxTypeText bounds the text of one type call.
const maxTypeText = 64 << 10

// xdotool runs xdotool with args on the desktop and fails on a non-zero exit.
func (s *server) xdotool(ctx context.Context, args ...string) (string, error) {
	c, err := s.prepare(&wire.ExecRequest{Cmd: append([]string{"xdotool"}, args...), Cwd: "/", Env: desktopEnv(), TimeoutSeconds: 60})
	if err != nil {
		return "", err
	}
	var out xdoOutput
	res, err := s.runExec(ctx, c, &out)
	if err != nil {
		return "", err
	}
	if res.ExitCode != 0 {
		return "", errdefs.Unavailable(wire.CodeDesktopUnavailable, "xdotool %s failed (exit %d): %s", args[0], res.ExitCode, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}

// xdoOutput is an execOutput that keeps both streams.
type xdoOutput struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *xdoOutput) started(int) {}
func (c *xdoOutput) write(_ string, p []byte) {
	c.mu.Lock()
	c.buf.Write(p)
	c.mu.Unlock()
}
func (c *xdoOutput) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// onScreen validates a point.
func (run *desktopRun) onScreen(x, y int) error {
	if x < 0 || y < 0 || x >= run.width || y >= run.height {
		return errdefs.Invalid(wire.CodeOffScreen, "point (%d, %d) is off the %dx%d screen", x, y, run.width, run.height)
	}
	return nil
}

// optionalPoint validates an optional x,y pair: both or neither.
func (run *desktopRun) optionalPoint(x, y *int) (bool, error) {
	if (x == nil) != (y == nil) {
		return false, errdefs.Invalid(wire.CodeInvalidDesktopInput, "give both x and y, or neither (the pointer's position)")
	}
	if x == nil {
		return false, nil
	}
	return true, run.onScreen(*x, *y)
}

func mouseButton(name string) (string, error) {
	switch name {
	case "", wire.MouseLeft:
		return "1", nil
	case wire.MouseMiddle:
		return "2", nil
	case wire.MouseRight:
		return "3", nil
	}
	return "", errdefs.Invalid(wire.CodeInvalidDesktopInput, "button must be left, middle or right, got %q", name)
}

// desktopInput decodes a body of type T and runs f with the running
// desktop; f answers the value to send.
func desktopInput[T any](s *server, f func(r *http.Request, run *desktopRun, req *T) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req T
		if err := decodeJSON(w, r, &req); err != nil {
			writeError(w, err)
			return
		}
		run, err := s.desktop.running()
		if err != nil {
			writeError(w, err)
			return
		}
		v, err := f(r, run, &req)
		if err != nil {
			writeError(w, err)
			return
		}
		if v == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		writeJSON(w, http.StatusOK, v)
	}
}

// pointer answers the pointer's position.
func (run *desktopRun) pointer() (wire.DesktopPoint, error) {
	var p wire.DesktopPoint
	err := run.withX(func(x *x11Conn) (err error) {
		p.X, p.Y, err = x.queryPointer()
		return err
	})
	return p, err
}

func (s *server) handleDesktopCursor(w http.ResponseWriter, r *http.Request) {
	run, err := s.desktop.running()
	if err == nil {
		var p wire.DesktopPoint
		if p, err = run.pointer(); err == nil {
			writeJSON(w, http.StatusOK, p)
			return
		}
	}
	writeError(w, err)
}

func (s *server) handleMouseMove() http.HandlerFunc {
	return desktopInput(s, func(r *http.Request, run *desktopRun, req *wire.MouseMoveRequest) (any, error) {
		if err := run.onScreen(req.X, req.Y); err != nil {
			return nil, err
		}
		if _, err := s.xdotool(r.Context(), "mousemove", strconv.Itoa(req.X), strconv.Itoa(req.Y)); err != nil {
			return nil, err
		}
		return run.pointer()
	})
}

func (s *server) handleMouseClick() http.HandlerFunc {
	return desktopInput(s, func(r *http.Request, run *desktopRun, req *wire.MouseClickRequest) (any, error) {
		move, err := run.optionalPoint(req.X, req.Y)
		if err != nil {
			return nil, err
		}
		button, err := mouseButton(req.Button)
		if err != nil {
			return nil, err
		}
		var args []string
		if move {
			args = append(args, "mousemove", strconv.Itoa(*req.X), strconv.Itoa(*req.Y))
		}
		args = append(args, "click")
		if req.Double {
			args = append(args, "--repeat", "2", "--delay", "80")
		}
		if _, err := s.xdotool(r.Context(), append(args, button)...); err != nil {
			return nil, err
		}
		return run.pointer()
	})
}

func (s *server) handleMouseDrag() http.HandlerFunc {
	return desktopInput(s, func(r *http.Request, run *desktopRun, req *wire.MouseDragRequest) (any, error) {
		for _, p := range []wire.DesktopPoint{req.From, req.To} {
			if err := run.onScreen(p.X, p.Y); err != nil {
				return nil, err
			}
		}
		button, err := mouseButton(req.Button)
		if err != nil {
			return nil, err
		}
		// Moving in steps with short pauses lets applications see a drag
		// rather than a jump.
		args := []string{"mousemove", strconv.Itoa(req.From.X), strconv.Itoa(req.From.Y), "mousedown", button}
		const steps = 8
		for i := 1; i <= steps; i++ {
			x := req.From.X + (req.To.X-req.From.X)*i/steps
			y := req.From.Y + (req.To.Y-req.From.Y)*i/steps
			args = append(args, "sleep", "0.02", "mousemove", strconv.Itoa(x), strconv.Itoa(y))
		}
		if _, err := s.xdotool(r.Context(), append(args, "mouseup", button)...); err != nil {
			return nil, err
		}
		return run.pointer()
	})
}

func (s *server) handleMouseScroll() http.HandlerFunc {
	return desktopInput(s, func(r *http.Request, run *desktopRun, req *wire.MouseScrollRequest) (any, error) {
		move, err := run.optionalPoint(req.X, req.Y)
		if err != nil {
			return nil, err
		}
		button, ok := map[string]string{"up": "4", "down": "5", "left": "6", "right": "7"}[req.Direction]
		if !ok {
			return nil, errdefs.Invalid(wire.CodeInvalidDesktopInput, "direction must be up, down, left or right, got %q", req.Direction)
		}
		amount := req.Amount
		if amount == 0 {
			amount = 1
		}
		if amount < 1 || amount > 100 {
			return nil, errdefs.Invalid(wire.CodeInvalidDesktopInput, "amount must be from 1 to 100 wheel clicks, got %d", req.Amount)
		}
		var args []string
		if move {
			args = append(args, "mousemove", strconv.Itoa(*req.X), strconv.Itoa(*req.Y))
		}
		args = append(args, "click", "--repeat", strconv.Itoa(amount), "--delay", "10", button)
		if _, err := s.xdotool(r.Context(), args...); err != nil {
			return nil, err
		}
		return run.pointer()
	})
}

func (s *server) handleTypeText() http.HandlerFunc {
	return desktopInput(s, func(r *http.Request, run *desktopRun, req *wire.TypeTextRequest) (any, error) {
		if req.Text == "" || len(req.Text) > maxTypeText || strings.ContainsRune(req.Text, 0) {
			return nil, errdefs.Invalid(wire.CodeInvalidDesktopInput, "text must be 1 to %d bytes without NUL", maxTypeText)
		}
		delay := req.DelayMs
		if delay == 0 {
			delay = 12
		}
		if delay < 0 || delay > 1000 {
			return nil, errdefs.Invalid(wire.CodeInvalidDesktopInput, "delayMs must be from 1 to 1000, got %d", req.DelayMs)
		}
		_, err := s.xdotool(r.Context(), "type", "--delay", strconv.Itoa(delay), "--", req.Text)
		return nil, err
	})
}

func (s *server) handlePressKey() http.HandlerFunc {
	return desktopInput(s, func(r *http.Request, run *desktopRun, req *wire.PressKeyRequest) (any, error) {
		chord, err := parseKeyChord(req.Key)
		if err != nil {
			return nil, err
		}
		_, err = s.xdotool(r.Context(), "key", "--", chord)
		return nil, err
	})
}

func (s *server) handleListWindows(w http.ResponseWriter, r *http.Request) {
	run, err := s.desktop.running()
	if err != nil {
		writeError(w, err)
		return
	}
	list, err := run.windows()
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, list)
}

// windows lists the window manager's client windows (EWMH
// _NET_CLIENT_LIST), in stacking order of mapping.
func (run *desktopRun) windows() ([]wire.DesktopWindow, error) {
	list := []wire.DesktopWindow{}
	err := run.withX(func(x *x11Conn) error {
		ids, err := x.windowList(x.root, "_NET_CLIENT_LIST")
		if err != nil {
			return err
		}
		active, err := x.windowList(x.root, "_NET_ACTIVE_WINDOW")
		if err != nil {
			return err
		}
		for _, id := range ids {
			g, err := x.geometry(id)
			if badWindow(err) {
				continue // closed since the list was read
			}
			if err != nil {
				return err
			}
			title, err := x.property(id, "_NET_WM_NAME")
			if err == nil && len(title) == 0 {
				title, err = x.property(id, "WM_NAME")
			}
			if badWindow(err) {
				continue
			}
			if err != nil {
				return err
			}
			list = append(list, wire.DesktopWindow{ID: strconv.FormatUint(uint64(id), 10), Title: string(title),
				X: g.Min.X, Y: g.Min.Y, Width: g.Dx(), Height: g.Dy(), Focused: len(active) > 0 && active[0] == id})
		}
		return nil
	})
	return list, err
}

func (s *server) handleFocusWindow(w http.ResponseWriter, r *http.Request) {
	run, err := s.desktop.running()
	if err != nil {
		writeError(w, err)
		return
	}
	id := r.PathValue("window")
	list, err := run.windows()
	if err != nil {
		writeError(w, err)
		return
	}
	found := false
	for _, win := range list {
		found = found || win.ID == id
	}
	if !found {
		writeError(w, errdefs.NotFound(wire.CodeWindowNotFound, "no window %q on the desktop (GET /desktop/windows lists them)", id))
		return
	}
	if _, err := s.xdotool(r.Context(), "windowactivate", id); err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *server) handleLaunch(w http.ResponseWriter, r *http.Request) {
	var req wire.LaunchRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	if _, err := s.desktop.running(); err != nil {
		writeError(w, err)
		return
	}
	env := desktopEnv()
	for k, v := range req.Env {
		if k != "DISPLAY" {
			env[k] = v
		}
	}
	p, err := s.startProcess(&wire.StartProcessRequest{Cmd: req.Cmd, Shell: req.Shell, Env: env, User: req.User})
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, p.toAPI())
}
