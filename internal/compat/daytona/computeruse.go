package daytona

import (
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/wire"
)

// Computer use: Daytona's /computeruse routes onto sbx's desktop (the
// agent's desktop routes: an X server, a window manager, VNC). The image
// must have the desktop's programs (scripts/build-desktop-image.sh);
// without them start is the agent's 400 naming what is missing.
// Recordings are in recording.go, per-program restarts and logs in
// computeruse_programs.go. Accessibility is not served: it answers 400
// FEATURE_UNSUPPORTED.

// desktopCall sends one desktop request to the agent of the request's sandbox.
func desktopCall[Out any](h *Handler, r *http.Request, route agentapi.Route, in any) (Out, error) {
	c, _, err := h.agentFor(r)
	if err != nil {
		var zero Out
		return zero, err
	}
	return agentapi.Call[Out](r.Context(), c, route, agentapi.Params{}, in)
}

// desktopPrograms is the programs of a status as Daytona's start answer
// shows them: name → running.
func desktopPrograms(st wire.DesktopStatus) map[string]any {
	out := map[string]any{}
	for _, p := range st.Programs {
		out[p.Name] = map[string]any{"running": p.Running, "pid": p.Pid, "restarts": p.Restarts}
	}
	return out
}

func (h *Handler) computerUseStart(w http.ResponseWriter, r *http.Request) error {
	st, err := desktopCall[wire.DesktopStatus](h, r, agentapi.DesktopStart, wire.DesktopStartRequest{})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"message": "Computer use processes started", "status": desktopPrograms(st)})
	return nil
}

func (h *Handler) computerUseStop(w http.ResponseWriter, r *http.Request) error {
	st, err := desktopCall[wire.DesktopStatus](h, r, agentapi.DesktopStop, nil)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"message": "Computer use processes stopped", "status": desktopPrograms(st)})
	return nil
}

func (h *Handler) computerUseStatus(w http.ResponseWriter, r *http.Request) error {
	st, err := desktopCall[wire.DesktopStatus](h, r, agentapi.DesktopStatus, nil)
	if err != nil {
		return err
	}
	status := "inactive"
	if st.Running {
		status = "active"
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": status})
	return nil
}

// computerUseProcessStatus serves GET /computeruse/process/{name}/status
// for the desktop's programs, by sbx's names (xvfb, wm, panel, vnc, novnc).
func (h *Handler) computerUseProcessStatus(w http.ResponseWriter, r *http.Request) error {
	st, err := desktopCall[wire.DesktopStatus](h, r, agentapi.DesktopStatus, nil)
	if err != nil {
		return err
	}
	name := r.PathValue("name")
	var names []string
	for _, p := range st.Programs {
		if p.Name == name {
			writeJSON(w, http.StatusOK, map[string]any{"processName": name, "running": p.Running})
			return nil
		}
		names = append(names, p.Name)
	}
	return invalid(wire.CodeInvalidParameter, "the desktop has no program %q (it has: %s)", name, strings.Join(names, ", "))
}

func (h *Handler) mousePosition(w http.ResponseWriter, r *http.Request) error {
	p, err := desktopCall[wire.DesktopPoint](h, r, agentapi.DesktopCursor, nil)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

func (h *Handler) mouseMove(w http.ResponseWriter, r *http.Request) error {
	var in wire.MouseMoveRequest
	if err := decode(w, r, &in); err != nil {
		return err
	}
	p, err := desktopCall[wire.DesktopPoint](h, r, agentapi.DesktopMouseMove, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

func (h *Handler) mouseClick(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		X, Y   *int
		Button string `json:"button"`
		Double bool   `json:"double"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	p, err := desktopCall[wire.DesktopPoint](h, r, agentapi.DesktopClick, wire.MouseClickRequest{X: in.X, Y: in.Y, Button: in.Button, Double: in.Double})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

func (h *Handler) mouseDrag(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		StartX int    `json:"startX"`
		StartY int    `json:"startY"`
		EndX   int    `json:"endX"`
		EndY   int    `json:"endY"`
		Button string `json:"button"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	req := wire.MouseDragRequest{From: wire.DesktopPoint{X: in.StartX, Y: in.StartY}, To: wire.DesktopPoint{X: in.EndX, Y: in.EndY}, Button: in.Button}
	p, err := desktopCall[wire.DesktopPoint](h, r, agentapi.DesktopDrag, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

func (h *Handler) mouseScroll(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		X, Y      *int
		Direction string `json:"direction"`
		Amount    int    `json:"amount"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if _, err := desktopCall[wire.DesktopPoint](h, r, agentapi.DesktopScroll, wire.MouseScrollRequest{X: in.X, Y: in.Y, Direction: in.Direction, Amount: in.Amount}); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"success": true})
	return nil
}

func (h *Handler) keyboardType(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Text  string `json:"text"`
		Delay int    `json:"delay"` // ms between keys
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if _, err := desktopCall[none](h, r, agentapi.DesktopType, wire.TypeTextRequest{Text: in.Text, DelayMs: in.Delay}); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{})
	return nil
}

// keyboardKey serves /keyboard/key {key, modifiers} and /keyboard/hotkey
// {keys: "ctrl+c"}: both are one chord for the desktop.
func (h *Handler) keyboardKey(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Key       string   `json:"key"`
		Modifiers []string `json:"modifiers"`
		Keys      string   `json:"keys"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	chord := in.Keys
	if chord == "" {
		chord = strings.Join(append(append([]string{}, in.Modifiers...), in.Key), "+")
	}
	if _, err := desktopCall[none](h, r, agentapi.DesktopPress, wire.PressKeyRequest{Key: chord}); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{})
	return nil
}

// screenshot serves the four screenshot routes: whole screen or region
// (x, y, width, height), PNG or, compressed, format/quality; showCursor
// draws the pointer. scale other than 1 is refused.
func (h *Handler) screenshot(compressed bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		in := r.URL.Query()
		q := url.Values{}
		for _, k := range []string{"x", "y", "width", "height"} {
			if v := in.Get(k); v != "" {
				q.Set(k, v)
			}
		}
		if in.Get("showCursor") == "true" {
			q.Set("cursor", "true")
		}
		if compressed {
			format := in.Get("format")
			if format == "" {
				format = "png"
			}
			q.Set("format", format)
			if v := in.Get("quality"); v != "" {
				q.Set("quality", v)
			}
			if s := in.Get("scale"); s != "" {
				if f, err := strconv.ParseFloat(s, 64); err != nil || f != 1 {
					return invalid(wire.CodeFeatureUnsupported, "screenshot scale %q is not supported on sbx: only 1", s)
				}
			}
		}
		c, _, err := h.agentFor(r)
		if err != nil {
			return err
		}
		resp, err := agentapi.Open(r.Context(), c, agentapi.DesktopScreenshot, agentapi.Params{Query: q}, nil, "")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		img, err := io.ReadAll(io.LimitReader(resp.Body, maxScreenshot+1))
		if err != nil {
			return err
		}
		if len(img) > maxScreenshot {
			return invalid(wire.CodeInvalidParameter, "the screenshot is larger than %d bytes: take a region or a jpeg", maxScreenshot)
		}
		out := map[string]any{"screenshot": base64.StdEncoding.EncodeToString(img), "sizeBytes": len(img)}
		if in.Get("showCursor") == "true" {
			if p, err := agentapi.Call[wire.DesktopPoint](r.Context(), c, agentapi.DesktopCursor, agentapi.Params{}, nil); err == nil {
				out["cursorPosition"] = p
			}
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}
}

// maxScreenshot bounds a screenshot the layer encodes (a 4K PNG fits).
const maxScreenshot = 64 << 20

func (h *Handler) displayInfo(w http.ResponseWriter, r *http.Request) error {
	st, err := desktopCall[wire.DesktopStatus](h, r, agentapi.DesktopStatus, nil)
	if err != nil {
		return err
	}
	displays := []map[string]any{}
	if st.Running {
		displays = append(displays, map[string]any{"id": 0, "x": 0, "y": 0, "width": st.Width, "height": st.Height, "isActive": true})
	}
	writeJSON(w, http.StatusOK, map[string]any{"displays": displays})
	return nil
}

func (h *Handler) displayWindows(w http.ResponseWriter, r *http.Request) error {
	list, err := desktopCall[[]wire.DesktopWindow](h, r, agentapi.DesktopWindows, nil)
	if err != nil {
		return err
	}
	out := []map[string]any{}
	for _, x := range list {
		id, _ := strconv.ParseInt(x.ID, 10, 64)
		out = append(out, map[string]any{"id": id, "title": x.Title, "x": x.X, "y": x.Y, "width": x.Width, "height": x.Height, "isActive": x.Focused})
	}
	writeJSON(w, http.StatusOK, map[string]any{"windows": out})
	return nil
}

// computerUseUnsupported refuses what sbx's desktop does not have.
func computerUseUnsupported(what string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		return invalid(wire.CodeFeatureUnsupported, "computer use %s is not supported on sbx", what)
	}
}
