package integration

import (
	"strings"
	"testing"
)

// TestDaytonaSDKSettings runs testdata/daytona/settings.mjs against a
// daemon with the SSH gateway: updateNetworkSettings, getMetricsLatest and
// SSH access through the official SDK.
func TestDaytonaSDKSettings(t *testing.T) {
	needDaytonaSDK(t)
	d := startDaemon(t, "--ssh-listen", freeAddr(t))
	if out := runDaytonaProgram(t, d, "settings.mjs", "SBX_API_URL="+d.baseURL()); !strings.Contains(out, "\ndone\n") {
		t.Errorf("settings.mjs:\n%s", out)
	}
}
