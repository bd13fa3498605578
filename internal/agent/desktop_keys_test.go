package agent

import (
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

func TestParseKeyChord(t *testing.T) {
	good := map[string]string{
		"Return":       "Return",
		"enter":        "Return",
		"a":            "a",
		"é":            "é",
		"ctrl+c":       "ctrl+c",
		"Control+C":    "ctrl+C",
		"alt+tab":      "alt+Tab",
		"ctrl+shift+t": "ctrl+shift+t",
		"cmd+space":    "super+space",
		"F12":          "F12",
		"ctrl++":       "ctrl+plus",
		"+":            "plus",
		"shift":        "Shift_L",
		"PageDown":     "Page_Down",
	}
	for in, want := range good {
		got, err := parseKeyChord(in)
		if err != nil || got != want {
			t.Errorf("parseKeyChord(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "notakey", "ctrl+notakey", "hyper+a", "ctrl+", "F25", "\t", "a+b"} {
		if _, err := parseKeyChord(in); errdefs.CodeOf(err) != wire.CodeUnknownKey {
			t.Errorf("parseKeyChord(%q): %v, want UNKNOWN_KEY", in, err)
		}
	}
}

func TestCheckDesktopSize(t *testing.T) {
	req := wire.DesktopStartRequest{}
	if err := checkDesktopSize(&req); err != nil || req.Width != 1280 || req.Height != 800 || req.Depth != 24 {
		t.Fatalf("defaults: %+v, %v", req, err)
	}
	for _, bad := range []wire.DesktopStartRequest{{Width: 10, Height: 600}, {Width: 800, Height: 100000}, {Width: 800, Height: 600, Depth: 8}, {Width: -1}} {
		if err := checkDesktopSize(&bad); errdefs.CodeOf(err) != wire.CodeInvalidScreenSize {
			t.Errorf("%+v: %v, want INVALID_SCREEN_SIZE", bad, err)
		}
	}
}
