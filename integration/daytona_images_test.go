package integration

import (
	"strings"
	"testing"
)

// TestDaytonaSDKImages runs testdata/daytona/images.mjs: Daytona's
// declarative images and snapshot.create/activate/delete on sbx's image
// builder, and its volumes on sbx's volumes.
func TestDaytonaSDKImages(t *testing.T) {
	needDaytonaSDK(t)
	d := startDaemon(t)
	importPython(t, d)
	if out := runDaytonaProgram(t, d, "images.mjs"); !strings.Contains(out, "\ndone\n") {
		t.Errorf("images.mjs:\n%s", out)
	}
}
