package integration

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/sdk"
)

// TestDaytonaMore runs testdata/daytona/more.mjs: Daytona's entrypoint
// session, recover, metrics history, git credentials, secrets and signed
// file URLs through the official SDK, with another team's key and a
// revoked key's URLs as the hostile cases.
func TestDaytonaMore(t *testing.T) {
	needDaytonaSDK(t)
	srv := newGitServer(t, "u", "right-token") // git_test.go: a forge in a namespace of the test's
	d := startDaemon(t, "--ui-stats-every", "1s", "--egress-allow-private", srv.addr.String())
	_, other := d.teamKey("other", sdk.Quotas{}, allScopes...)
	_, temp := d.teamKey(auth.DefaultTeam, sdk.Quotas{}, sdk.ScopeSandboxesRead, sdk.ScopeSandboxesWrite, sdk.ScopeExec) // revoked in more.mjs

	// A sandbox in state error, as a failed stop leaves one: recover's case.
	broken := d.create(sdk.CreateSandboxRequest{Name: "broken"})
	if _, err := d.client.StopSandbox(context.Background(), broken.ID, sdk.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	d.stop()
	db, err := sql.Open("sqlite", filepath.Join(d.dataDir, "sbx.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("UPDATE sandboxes SET state = 'error', error = 'disk gone' WHERE id = ?", broken.ID); err != nil {
		t.Fatal(err)
	}
	db.Close()
	d.start()

	out := runDaytonaProgram(t, d, "more.mjs", "SBX_API_URL="+d.baseURL(), "OTHER_KEY="+other.Key, "TEMP_KEY="+temp.Key, "TEMP_KEY_ID="+temp.ID, "BROKEN=broken",
		"GIT_URL="+srv.url, "GIT_HOST="+strings.TrimPrefix(srv.url, "http://"), "GIT_USER=u", "GIT_TOKEN=right-token")
	if !strings.Contains(out, "\ndone\n") {
		t.Errorf("more.mjs:\n%s", out)
	}
}

// TestDaytonaMoreDesktop runs testdata/daytona/more_desktop.mjs: one
// desktop program restarted, its output read, through computerUse.
func TestDaytonaMoreDesktop(t *testing.T) {
	needDaytonaSDK(t)
	d := startDaemon(t)
	importDesktop(t, d)
	_, other := d.teamKey("other", sdk.Quotas{}, allScopes...)
	if out := runDaytonaProgram(t, d, "more_desktop.mjs", "OTHER_KEY="+other.Key); !strings.Contains(out, "\ndone\n") {
		t.Errorf("more_desktop.mjs:\n%s", out)
	}
}
