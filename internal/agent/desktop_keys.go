package agent

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Key chords ("ctrl+c", "alt+tab", "Return") are checked against known
// names before xdotool sees them: xdotool only warns about a name it does
// not know and presses nothing, which an agent could not tell from success.

// keyModifiers maps accepted modifier names to xdotool's.
var keyModifiers = map[string]string{
	"ctrl": "ctrl", "control": "ctrl",
	"shift": "shift",
	"alt":   "alt", "option": "alt",
	"super": "super", "win": "super", "meta": "super", "cmd": "super", "command": "super",
}

// keyNames maps lower-case names (and common aliases) to X keysym names.
var keyNames = func() map[string]string {
	m := map[string]string{
		"return": "Return", "enter": "Return", "escape": "Escape", "esc": "Escape", "tab": "Tab",
		"backspace": "BackSpace", "delete": "Delete", "del": "Delete", "insert": "Insert", "ins": "Insert",
		"home": "Home", "end": "End", "page_up": "Page_Up", "pageup": "Page_Up", "pgup": "Page_Up",
		"page_down": "Page_Down", "pagedown": "Page_Down", "pgdn": "Page_Down",
		"up": "Up", "down": "Down", "left": "Left", "right": "Right",
		"space": "space", "menu": "Menu", "print": "Print", "printscreen": "Print", "pause": "Pause",
		"caps_lock": "Caps_Lock", "capslock": "Caps_Lock", "num_lock": "Num_Lock", "scroll_lock": "Scroll_Lock",
		"plus": "plus", "minus": "minus", "equal": "equal", "comma": "comma", "period": "period",
		"slash": "slash", "backslash": "backslash", "semicolon": "semicolon", "apostrophe": "apostrophe",
		"grave": "grave", "bracketleft": "bracketleft", "bracketright": "bracketright",
		"kp_enter": "KP_Enter", "ctrl_l": "Control_L", "ctrl_r": "Control_R", "shift_l": "Shift_L",
		"shift_r": "Shift_R", "alt_l": "Alt_L", "alt_r": "Alt_R", "super_l": "Super_L", "super_r": "Super_R",
	}
	for i := 1; i <= 24; i++ {
		n := "F" + strconv.Itoa(i)
		m[strings.ToLower(n)] = n
	}
	return m
}()

// parseKeyChord validates a chord and returns it in xdotool's syntax.
func parseKeyChord(chord string) (string, error) {
	bad := func(format string, args ...any) error {
		return errdefs.Invalid(wire.CodeUnknownKey, "key %q: "+format+"; give a key such as \"Return\", \"a\" or \"F5\", with modifiers ctrl, shift, alt, super joined by '+' (\"ctrl+c\")", append([]any{chord}, args...)...)
	}
	if chord == "" || len(chord) > 128 {
		return "", bad("empty or too long")
	}
	parts := strings.Split(chord, "+")
	if strings.HasSuffix(chord, "++") || chord == "+" { // the plus key itself
		parts = append(strings.Split(strings.TrimSuffix(chord, "++"), "+"), "plus")
		if chord == "+" {
			parts = []string{"plus"}
		}
	}
	out := make([]string, 0, len(parts))
	for i, p := range parts {
		if i < len(parts)-1 {
			m, ok := keyModifiers[strings.ToLower(p)]
			if !ok {
				return "", bad("unknown modifier %q", p)
			}
			out = append(out, m)
			continue
		}
		if utf8.RuneCountInString(p) == 1 {
			r, _ := utf8.DecodeRuneInString(p)
			if r < 0x20 || r == 0x7f {
				return "", bad("control characters are not keys")
			}
			out = append(out, p)
			continue
		}
		if name, ok := keyNames[strings.ToLower(p)]; ok {
			out = append(out, name)
			continue
		}
		if _, ok := keyModifiers[strings.ToLower(p)]; ok { // "ctrl" alone presses Control_L
			out = append(out, keyNames[strings.ToLower(keyModifiers[strings.ToLower(p)])+"_l"])
			continue
		}
		return "", bad("unknown key name %q", p)
	}
	return strings.Join(out, "+"), nil
}
