package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sbxhq/sbx/wire"
)

// init, restore, reset, remotes and branch deletion, and a clone's
// upstream with ahead counted.
func TestGitRepoOps(t *testing.T) {
	isolateHome(t)
	a := startAgent(t)
	a.call("POST", "/git/init", wire.GitInitRequest{Path: "r", InitialBranch: "main"}, 200, nil)
	write := func(name, body string) { os.WriteFile(filepath.Join(a.cwd, "r", name), []byte(body), 0o644) }
	commit := func(msg string, files ...string) {
		a.call("POST", "/git/add", wire.GitAddRequest{Path: "r", Files: files}, 200, nil)
		a.call("POST", "/git/commit", wire.GitCommitRequest{Path: "r", Message: msg, AuthorName: "A", AuthorEmail: "a@example.com"}, 200, nil)
	}
	write("x", "x\n")
	commit("first", "x")

	var st wire.GitStatus
	write("x", "changed\n")
	a.call("POST", "/git/restore", wire.GitRestoreRequest{Path: "r", Files: []string{"x"}}, 200, &st)
	if b, _ := os.ReadFile(filepath.Join(a.cwd, "r", "x")); string(b) != "x\n" || !st.Clean || st.Branch != "main" {
		t.Fatalf("after restore: %q %+v", b, st)
	}
	write("y", "y\n")
	a.call("POST", "/git/add", wire.GitAddRequest{Path: "r", Files: []string{"y"}}, 200, nil)
	a.call("POST", "/git/restore", wire.GitRestoreRequest{Path: "r", Files: []string{"y"}, Staged: true}, 200, &st)
	if len(st.Files) != 1 || st.Files[0].Staging != "untracked" {
		t.Fatalf("after restore --staged: %+v", st)
	}
	commit("second", "y")
	a.call("POST", "/git/reset", wire.GitResetRequest{Path: "r", Mode: "hard", Target: "HEAD~1"}, 200, &st)
	if _, err := os.Stat(filepath.Join(a.cwd, "r", "y")); !os.IsNotExist(err) || !st.Clean {
		t.Fatalf("after reset --hard HEAD~1: y %v, %+v", err, st)
	}
	a.callErr("POST", "/git/reset", wire.GitResetRequest{Path: "r", Mode: "keep"}, 400, wire.CodeInvalidParameter)

	a.call("POST", "/git/init", wire.GitInitRequest{Path: "bare.git", Bare: true}, 200, nil)
	a.call("POST", "/git/remotes", wire.GitAddRemoteRequest{Path: "r", Name: "origin", URL: "file://" + filepath.Join(a.cwd, "bare.git"), Fetch: true}, 200, nil)
	a.callErr("POST", "/git/remotes", wire.GitAddRemoteRequest{Path: "r", Name: "origin", URL: "file:///x"}, 409, wire.CodeGitConflict)
	var remotes []wire.GitRemote
	a.call("POST", "/git/remotes/list", wire.GitRepoRequest{Path: "r"}, 200, &remotes)
	if len(remotes) != 1 || remotes[0].Name != "origin" {
		t.Fatalf("remotes: %+v", remotes)
	}
	a.call("POST", "/git/push", wire.GitSyncRequest{Path: "r", SetUpstream: true}, 200, nil)
	write("z", "z\n")
	commit("third", "z")
	a.call("POST", "/git/status", wire.GitRepoRequest{Path: "r"}, 200, &st)
	if st.Upstream != "origin/main" || st.Ahead != 1 || st.Behind != 0 {
		t.Fatalf("status after a commit past the upstream: %+v", st)
	}

	a.call("POST", "/git/checkout", wire.GitCheckoutRequest{Path: "r", Branch: "topic", Create: true}, 200, nil)
	a.callErr("POST", "/git/branches/delete", wire.GitBranchRequest{Path: "r", Name: "topic"}, 409, wire.CodeGitConflict)
	a.call("POST", "/git/checkout", wire.GitCheckoutRequest{Path: "r", Branch: "main"}, 200, nil)
	a.call("POST", "/git/branches/delete", wire.GitBranchRequest{Path: "r", Name: "topic"}, 200, nil)
	var br wire.GitBranches
	a.call("POST", "/git/branches", wire.GitRepoRequest{Path: "r"}, 200, &br)
	if len(br.Local) != 1 || br.Local[0] != "main" {
		t.Fatalf("branches after delete: %+v", br)
	}
}
