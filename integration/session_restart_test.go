package integration

import (
	"context"
	"testing"

	"github.com/sbxhq/sbx/sdk"
)

// TestSessionExitStartsFreshShell: a session whose shell exited (`exit`
// sent to it, with or without a status, streamed or not) runs the next
// command in a fresh shell: the old shell's variables and cwd are gone, and
// the answer says the shell was restarted (Cloudflare's SDK recovers such a
// session the same way).
func TestSessionExitStartsFreshShell(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{}).ID
	c := d.client
	if _, err := c.CreateSession(ctx, sb, sdk.CreateSessionRequest{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	for _, exit := range []string{"exit", "exit 0", "exit 3", "echo bye; exit", "exit\n"} {
		if _, err := c.SessionExec(ctx, sb, "s", sdk.SessionExecRequest{Command: "cd /tmp; export OLD=" + "kept"}); err != nil {
			t.Fatal(err)
		}
		res, err := c.SessionExec(ctx, sb, "s", sdk.SessionExecRequest{Command: exit})
		if err != nil || !res.SessionEnded {
			t.Errorf("%q: %+v, %v; want the session's shell ended", exit, res, err)
		}
		res, err = c.SessionExec(ctx, sb, "s", sdk.SessionExecRequest{Command: `echo "[$OLD]"; pwd`})
		if err != nil {
			t.Fatal(err)
		}
		if res.Stdout != "[]\n/workspace\n" || !res.ShellRestarted || res.SessionEnded || res.ExitCode != 0 {
			t.Errorf("after %q: %+v; want a fresh shell without OLD, in /workspace", exit, res)
		}
	}
}
