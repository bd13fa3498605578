package e2b

import (
	"context"
	"path"

	"github.com/sbxhq/sbx/sdk"
)

// The agent writes files and makes directories as root; E2B's envd does so
// as the calling user. So that the user's commands can change what the
// user wrote through the files API, a write first makes missing parent
// directories as the user and then hands the file over; makeDir hands the
// new directory over. Best effort: an image without the account keeps
// root's ownership (and the write itself still succeeds).

// asUser runs argv as user in the sandbox and reports whether it exited 0.
func (s *Server) asUser(ctx context.Context, user string, argv ...string) bool {
	var res sdk.ExecResult
	err := s.doJSON(ctx, agentCall{method: "POST", path: "/exec", body: sdk.ExecRequest{Cmd: argv, User: user, Cwd: "/"}}, &res)
	return err == nil && res.ExitCode == 0
}

// prepareWrite makes p's parent directories as user.
func (s *Server) prepareWrite(ctx context.Context, user, p string) {
	if user != "root" && user != "0" {
		s.asUser(ctx, user, "mkdir", "-p", path.Dir(p))
	}
}

// handOver gives p to user (after the agent made it as root).
func (s *Server) handOver(ctx context.Context, user, p string) {
	if user != "root" && user != "0" {
		s.asUser(ctx, "root", "chown", user+":", p)
	}
}
