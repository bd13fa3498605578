package main

import "testing"

func TestParsePolicyDuration(t *testing.T) {
	good := map[string]int{"0": 0, "900": 900, "15m": 900, "2h": 7200, "7d": 604800, "1d12h": 129600, "90s": 90, "off": 0}
	for in, want := range good {
		if got, err := parsePolicyDuration(in, false); err != nil || got != want {
			t.Errorf("%q = %d, %v; want %d", in, got, err, want)
		}
	}
	if got, err := parsePolicyDuration("never", true); err != nil || got != -1 {
		t.Errorf("never = %d, %v", got, err)
	}
	for _, bad := range []string{"soon", "-1", "1.5s", "d", "-5m", "1x"} {
		if _, err := parsePolicyDuration(bad, false); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
