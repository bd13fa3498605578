package agent

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/sbxhq/sbx/wire"
)

// seedBare makes a bare repository with one commit (README) on master.
func seedBare(t *testing.T) string {
	t.Helper()
	// In-process, not git-receive-pack: the agent's reaper, running in this
	// test binary, would collect the child before exec's Wait does.
	prepareRemotes()
	bare, work := t.TempDir(), t.TempDir()
	if _, err := git.PlainInit(bare, true); err != nil {
		t.Fatal(err)
	}
	repo, err := git.PlainInit(work, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{bare}}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(work, "README"), []byte("seed\n"), 0o644)
	wt, _ := repo.Worktree()
	wt.Add("README")
	sig := &object.Signature{Name: "seed", Email: "seed@example.com", When: time.Now()}
	if _, err := wt.Commit("seed", &git.CommitOptions{Author: sig}); err != nil {
		t.Fatal(err)
	}
	if err := repo.Push(&git.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	return bare
}

// isolateHome gives git an empty home: no global config, no stored credentials.
func isolateHome(t *testing.T) string {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	return home
}

func TestGitRoundTripThroughAFileRemote(t *testing.T) {
	isolateHome(t)
	a := startAgent(t)
	url := "file://" + seedBare(t)

	var st wire.GitStatus
	a.call("POST", "/git/clone", wire.GitCloneRequest{URL: url, Path: "one"}, 200, &st)
	if st.Path != filepath.Join(a.cwd, "one") || st.Branch != "master" || st.Head == "" || !st.Clean {
		t.Fatalf("clone: %+v", st)
	}
	a.callErr("POST", "/git/clone", wire.GitCloneRequest{URL: url, Path: "one"}, 409, wire.CodeGitConflict)
	var pinned wire.GitStatus
	a.call("POST", "/git/clone", wire.GitCloneRequest{URL: url, Path: "pinned", Commit: st.Head}, 200, &pinned)
	if pinned.Head != st.Head || pinned.Branch != "" {
		t.Fatalf("clone at a commit: %+v, want detached at %s", pinned, st.Head)
	}
	a.callErr("POST", "/git/clone", wire.GitCloneRequest{URL: url, Path: "nocommit", Commit: "0123456789012345678901234567890123456789"}, 404, wire.CodeGitBranchNotFound)
	if _, err := os.Stat(filepath.Join(a.cwd, "nocommit")); !os.IsNotExist(err) {
		t.Fatalf("a clone at a missing commit left its directory: %v", err)
	}

	os.WriteFile(filepath.Join(a.cwd, "one", "new.txt"), []byte("hello\n"), 0o644)
	a.call("POST", "/git/status", wire.GitRepoRequest{Path: "one"}, 200, &st)
	if st.Clean || len(st.Files) != 1 || st.Files[0] != (wire.GitFileStatus{Path: "new.txt", Staging: "untracked", Worktree: "untracked"}) {
		t.Fatalf("status after a new file: %+v", st)
	}
	a.call("POST", "/git/add", wire.GitAddRequest{Path: "one", Files: []string{"."}}, 200, &st)
	if len(st.Files) != 1 || st.Files[0].Staging != "added" {
		t.Fatalf("status after add: %+v", st)
	}
	var c wire.GitCommit
	a.call("POST", "/git/commit", wire.GitCommitRequest{Path: "one", Message: "add new", AuthorName: "Ann", AuthorEmail: "ann@example.com"}, 200, &c)
	if c.Hash == "" || c.AuthorName != "Ann" || c.Message != "add new" {
		t.Fatalf("commit: %+v", c)
	}
	a.callErr("POST", "/git/commit", wire.GitCommitRequest{Path: "one", Message: "nothing", AuthorName: "Ann", AuthorEmail: "ann@example.com"}, 409, wire.CodeGitConflict)
	a.callErr("POST", "/git/commit", wire.GitCommitRequest{Path: "one", Message: "no author", AllowEmpty: true}, 400, wire.CodeInvalidParameter)

	var push wire.GitSyncResult
	a.call("POST", "/git/push", wire.GitSyncRequest{Path: "one"}, 200, &push)
	if push.UpToDate || push.Head != c.Hash || push.Branch != "master" {
		t.Fatalf("push: %+v", push)
	}

	// A second clone sees the commit, adds one, and the first pulls it.
	a.call("POST", "/git/clone", wire.GitCloneRequest{URL: url, Path: filepath.Join(a.cwd, "two")}, 200, &st)
	if st.Head != c.Hash {
		t.Fatalf("second clone at %s, want %s", st.Head, c.Hash)
	}
	os.WriteFile(filepath.Join(a.cwd, "two", "README"), []byte("changed\n"), 0o644)
	var c2 wire.GitCommit
	a.call("POST", "/git/commit", wire.GitCommitRequest{Path: "two", Message: "change", AuthorName: "Bo", AuthorEmail: "bo@example.com", All: true}, 200, &c2)
	a.call("POST", "/git/push", wire.GitSyncRequest{Path: "two"}, 200, &push)
	var pull wire.GitSyncResult
	a.call("POST", "/git/pull", wire.GitSyncRequest{Path: "one"}, 200, &pull)
	if pull.UpToDate || pull.Head != c2.Hash {
		t.Fatalf("pull: %+v, want head %s", pull, c2.Hash)
	}
	if b, _ := os.ReadFile(filepath.Join(a.cwd, "one", "README")); string(b) != "changed\n" {
		t.Fatalf("README after pull: %q", b)
	}
	a.call("POST", "/git/pull", wire.GitSyncRequest{Path: "one"}, 200, &pull)
	if !pull.UpToDate {
		t.Fatalf("second pull: %+v", pull)
	}

	var log []wire.GitCommit
	a.call("POST", "/git/log", wire.GitLogRequest{Path: "one", Limit: 2}, 200, &log)
	if len(log) != 2 || log[0].Hash != c2.Hash || log[1].Hash != c.Hash {
		t.Fatalf("log: %+v", log)
	}

	a.call("POST", "/git/checkout", wire.GitCheckoutRequest{Path: "one", Branch: "feature", Create: true}, 200, &st)
	var br wire.GitBranches
	a.call("POST", "/git/branches", wire.GitRepoRequest{Path: "one"}, 200, &br)
	if br.Current != "feature" || !slices.Equal(br.Local, []string{"feature", "master"}) || !slices.Contains(br.Remote, "origin/master") {
		t.Fatalf("branches: %+v", br)
	}
	os.WriteFile(filepath.Join(a.cwd, "one", "README"), []byte("dirty\n"), 0o644)
	a.callErr("POST", "/git/checkout", wire.GitCheckoutRequest{Path: "one", Branch: "master"}, 409, wire.CodeGitConflict)
	a.callErr("POST", "/git/checkout", wire.GitCheckoutRequest{Path: "one", Branch: "nope"}, 404, wire.CodeGitBranchNotFound)

	os.Mkdir(filepath.Join(a.cwd, "plain"), 0o755)
	a.callErr("POST", "/git/status", wire.GitRepoRequest{Path: "plain"}, 404, wire.CodeGitNotARepository)
	a.callErr("POST", "/git/clone", wire.GitCloneRequest{URL: "file:///nonexistent", Path: "three"}, 404, wire.CodeGitRemoteNotFound)
	if _, err := os.Stat(filepath.Join(a.cwd, "three")); !os.IsNotExist(err) {
		t.Fatalf("a failed clone left its directory: %v", err)
	}
}

// A server that refuses the credentials answers GIT_AUTH_FAILED, and the
// token appears nowhere in the sandbox.
func TestGitWrongTokenIsAnAuthError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
		http.Error(w, "bad credentials", http.StatusUnauthorized)
	}))
	defer srv.Close()
	home := isolateHome(t)
	a := startAgent(t)
	a.callErr("POST", "/git/clone", wire.GitCloneRequest{URL: srv.URL + "/repo.git", Path: "r", Username: "u", Token: "wrong-token"}, 400, wire.CodeGitAuthFailed)
	if _, err := os.Stat(filepath.Join(a.cwd, "r")); !os.IsNotExist(err) {
		t.Fatalf("a refused clone left its directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, ".git-credentials")); !os.IsNotExist(err) {
		t.Fatalf("credentials were stored without storeCredentials: %v", err)
	}
}
