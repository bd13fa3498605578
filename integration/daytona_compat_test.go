package integration

import (
	"strings"
	"testing"
)

// TestDaytonaSDKCompat runs testdata/daytona/compat.mjs: methods of
// Daytona's SDK that must work as on Daytona or refuse with an error naming
// what sbx does not do. Each case prints its own ok or FAIL line.
func TestDaytonaSDKCompat(t *testing.T) {
	needDaytonaSDK(t)
	d := startDaemon(t)
	importPython(t, d)
	out := runDaytonaProgram(t, d, "compat.mjs")
	if !strings.Contains(out, "\ndone\n") {
		t.Errorf("compat.mjs:\n%s", out)
	}
}
