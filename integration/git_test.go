package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/cgi"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/vishvananda/netns"

	"github.com/sbxhq/sbx/sdk"
)

// TestGit drives git in a sandbox (busybox image: no git program) through
// the API: a bare repository inside the sandbox over file://, then one on
// a smart-HTTP server with basic auth in a network namespace the test makes.
func TestGit(t *testing.T) {
	// A namespace standing for a git forge, on a private address the
	// operator lets sandboxes reach.
	srv := newGitServer(t, "u", "right-token")
	d := startDaemon(t, "--egress-allow-private", srv.addr.String())
	ctx := context.Background()
	d.create(sdk.CreateSandboxRequest{Name: "git"})
	c := d.client
	author := sdk.GitCommitRequest{AuthorName: "Ann", AuthorEmail: "ann@example.com"}
	commit := func(path, msg string) *sdk.GitCommit {
		t.Helper()
		req := author
		req.Path, req.Message, req.All = path, msg, true
		got, err := c.GitCommit(ctx, "git", req)
		if err != nil {
			t.Fatalf("commit in %s: %v", path, err)
		}
		return got
	}

	// file://: a bare repository made on the host, uploaded into the sandbox.
	bare, seed := seedRepo(t)
	if _, err := c.UploadDir(ctx, "git", bare, "/srv/repo.git"); err != nil {
		t.Fatal(err)
	}
	st, err := c.GitClone(ctx, "git", sdk.GitCloneRequest{URL: "file:///srv/repo.git", Path: "app"})
	if err != nil {
		t.Fatal(err)
	}
	if st.Path != "/workspace/app" || st.Branch != "master" || st.Head != seed || !st.Clean {
		t.Fatalf("clone: %+v, want master at %s", st, seed)
	}
	if got := d.exec("git", "stat -c %u:%g /workspace/app/.git/HEAD /workspace/app/README | sort -u"); got != "0:0" {
		t.Errorf("files git made belong to %q, want the sandbox's root 0:0", got)
	}
	if _, err := c.Upload(ctx, "git", "/workspace/app/NEW", strings.NewReader("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err = c.GitStatus(ctx, "git", "app")
	if err != nil || st.Clean || len(st.Files) != 1 || st.Files[0].Path != "NEW" || st.Files[0].Worktree != "untracked" {
		t.Fatalf("status with a new file: %+v %v", st, err)
	}
	if st, err = c.GitAdd(ctx, "git", sdk.GitAddRequest{Path: "app", Files: []string{"NEW"}}); err != nil || st.Files[0].Staging != "added" {
		t.Fatalf("add: %+v %v", st, err)
	}
	first := commit("app", "add NEW")
	if res, err := c.GitPush(ctx, "git", sdk.GitSyncRequest{Path: "app"}); err != nil || res.UpToDate || res.Head != first.Hash {
		t.Fatalf("push: %+v %v", res, err)
	}
	if _, err := c.GitClone(ctx, "git", sdk.GitCloneRequest{URL: "file:///srv/repo.git", Path: "/workspace/other"}); err != nil {
		t.Fatal(err)
	}
	d.exec("git", "echo changed > /workspace/other/README")
	second := commit("other", "change README")
	if _, err := c.GitPush(ctx, "git", sdk.GitSyncRequest{Path: "other"}); err != nil {
		t.Fatal(err)
	}
	if res, err := c.GitPull(ctx, "git", sdk.GitSyncRequest{Path: "app"}); err != nil || res.Head != second.Hash {
		t.Fatalf("pull: %+v %v, want head %s", res, err, second.Hash)
	}
	if got := d.exec("git", "cat /workspace/app/README"); got != "changed" {
		t.Fatalf("README after pull: %q", got)
	}
	log, err := c.GitLog(ctx, "git", sdk.GitLogRequest{Path: "app"})
	if err != nil || len(log) != 3 || log[0].Hash != second.Hash || log[1].Hash != first.Hash || log[2].Hash != seed || log[0].AuthorName != "Ann" {
		t.Fatalf("log: %+v %v", log, err)
	}
	if _, err := c.GitCheckout(ctx, "git", sdk.GitCheckoutRequest{Path: "app", Branch: "feature", Create: true}); err != nil {
		t.Fatal(err)
	}
	br, err := c.GitBranches(ctx, "git", "app")
	if err != nil || br.Current != "feature" || !slices.Equal(br.Local, []string{"feature", "master"}) {
		t.Fatalf("branches: %+v %v", br, err)
	}
	// The CLI: the same operations.
	if out, stderr, code := d.sbx("", "git", "log", "git", "-C", "app", "-n", "1"); code != 0 || !strings.HasPrefix(out, second.Hash[:10]+" Ann <ann@example.com>") {
		t.Fatalf("sbx git log: %d %q %s", code, out, stderr)
	}
	if out, stderr, code := d.sbx("", "git", "branches", "git", "-C", "app"); code != 0 || out != "* feature\n  master\n  remotes/origin/master\n" {
		t.Fatalf("sbx git branches: %d %q %s", code, out, stderr)
	}
	if _, stderr, code := d.sbx("", "git", "status", "git", "-C", "/srv"); code == 0 || !strings.Contains(stderr, "GIT_NOT_A_REPOSITORY") {
		t.Fatalf("sbx git status of a plain directory: %d %s", code, stderr)
	}
	if _, err := c.GitStatus(ctx, "git", "/srv"); apiCode(err) != string(sdk.CodeGitNotARepository) {
		t.Fatalf("status of a plain directory: %v", err)
	}

	// HTTP with basic auth, from the namespace standing for a git forge.
	url := srv.url + "/repo.git"
	_, err = c.GitClone(ctx, "git", sdk.GitCloneRequest{URL: url, Path: "web", Username: "u", Token: "wrong-token"})
	if apiCode(err) != string(sdk.CodeGitAuthFailed) || !strings.Contains(err.Error(), "credentials") {
		t.Fatalf("clone with a wrong token: %v, want %s", err, sdk.CodeGitAuthFailed)
	}
	if _, err := c.StatFile(ctx, "git", "web"); apiCode(err) != string(sdk.CodeFileNotFound) {
		t.Fatalf("a refused clone left its directory: %v", err)
	}
	st, err = c.GitClone(ctx, "git", sdk.GitCloneRequest{URL: url, Path: "web", Username: "u", Token: "right-token"})
	if err != nil || st.Head != srv.seed {
		t.Fatalf("clone over http: %+v %v", st, err)
	}
	if cfg := d.exec("git", "cat /workspace/web/.git/config; cat /root/.git-credentials 2>/dev/null; true"); strings.Contains(cfg, "right-token") {
		t.Fatalf("the token was written into the sandbox without storeCredentials:\n%s", cfg)
	}
	d.exec("git", "echo from-sandbox > /workspace/web/SANDBOX")
	if _, err := c.GitAdd(ctx, "git", sdk.GitAddRequest{Path: "web", Files: []string{"."}}); err != nil {
		t.Fatal(err)
	}
	pushed := commit("web", "from the sandbox")
	if _, err := c.GitPush(ctx, "git", sdk.GitSyncRequest{Path: "web"}); apiCode(err) != string(sdk.CodeGitAuthFailed) {
		t.Fatalf("push without credentials: %v, want %s", err, sdk.CodeGitAuthFailed)
	}
	if _, err := c.GitPush(ctx, "git", sdk.GitSyncRequest{Path: "web", Username: "u", Token: "right-token"}); err != nil {
		t.Fatal(err)
	}
	if got := srv.head(t); got != pushed.Hash {
		t.Fatalf("the server's master is %s after the push, want %s", got, pushed.Hash)
	}
	// A commit made elsewhere comes in with pull; stored credentials serve it.
	upstream := srv.commit(t, "UPSTREAM", "from upstream")
	if _, err := c.GitClone(ctx, "git", sdk.GitCloneRequest{URL: url, Path: "kept", Username: "u", Token: "right-token", StoreCredentials: true}); err != nil {
		t.Fatal(err)
	}
	if res, err := c.GitPull(ctx, "git", sdk.GitSyncRequest{Path: "web"}); err != nil || res.Head != upstream {
		t.Fatalf("pull with stored credentials: %+v %v, want head %s", res, err, upstream)
	}
	if got := d.exec("git", "cat /workspace/web/UPSTREAM"); got != "from upstream" {
		t.Fatalf("UPSTREAM after pull: %q", got)
	}
	if got := d.exec("git", "stat -c %a /root/.git-credentials"); got != "600" {
		t.Fatalf("stored credentials have mode %s, want 600", got)
	}
}

// seedRepo makes a bare repository on the host with one commit (README) on
// master, and returns its path and the commit.
func seedRepo(t *testing.T) (string, string) {
	t.Helper()
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
	hash := commitFile(t, repo, work, "README", "seed", "seed")
	if err := repo.Push(&git.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	return bare, hash
}

func commitFile(t *testing.T, repo *git.Repository, work, name, content, msg string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(work, name), []byte(content+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wt, _ := repo.Worktree()
	if _, err := wt.Add(name); err != nil {
		t.Fatal(err)
	}
	h, err := wt.Commit(msg, &git.CommitOptions{Author: &object.Signature{Name: "host", Email: "host@example.com", When: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

// gitServer is git's own smart-HTTP server (git http-backend, as CGI) with
// basic auth, listening in a network namespace the test made.
type gitServer struct {
	url  string     // http://ADDR:8080
	addr netip.Addr // in a private namespace
	root string     // holds repo.git
	seed string     // the first commit
}

func newGitServer(t *testing.T, user, token string) *gitServer {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git http-backend serves the test's repository: %v (apt-get install git)", err)
	}
	bare, seed := seedRepo(t)
	srv := &gitServer{root: filepath.Dir(bare), seed: seed}
	if err := os.Rename(bare, filepath.Join(srv.root, "repo.git")); err != nil {
		t.Fatal(err)
	}
	addr, ns := gitNamespace(t)
	ln := listenIn(t, ns, netip.AddrPortFrom(addr, 8080).String())
	backend := &cgi.Handler{Path: gitBin, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + srv.root, "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER=" + user}}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != token {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "wrong credentials", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	})}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	srv.addr, srv.url = addr, "http://"+netip.AddrPortFrom(addr, 8080).String()
	return srv
}

// head is the server repository's master.
func (s *gitServer) head(t *testing.T) string {
	t.Helper()
	repo, err := git.PlainOpen(filepath.Join(s.root, "repo.git"))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := repo.Reference(plumbing.NewBranchReferenceName("master"), true)
	if err != nil {
		t.Fatal(err)
	}
	return ref.Hash().String()
}

// commit adds a commit to the server's master from a clone on the host.
func (s *gitServer) commit(t *testing.T, name, content string) string {
	t.Helper()
	work := t.TempDir()
	repo, err := git.PlainClone(work, false, &git.CloneOptions{URL: filepath.Join(s.root, "repo.git")})
	if err != nil {
		t.Fatal(err)
	}
	h := commitFile(t, repo, work, name, content, "upstream change")
	if err := repo.Push(&git.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	return h
}

// gitNamespace makes a network namespace with a veth to the host and returns
// the namespace's address on it.
func gitNamespace(t *testing.T) (netip.Addr, netns.NsHandle) {
	t.Helper()
	subnet := freeSubnet(t)
	host := subnet.Addr().Next()
	addr := host.Next()
	name := fmt.Sprintf("sbxt-git-%06x", rand.IntN(1<<24))
	veth := fmt.Sprintf("sbxg%06x", rand.IntN(1<<24))
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	run("ip", "netns", "add", name)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	run("ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", name)
	t.Cleanup(func() { exec.Command("ip", "link", "del", veth).Run() })
	run("ip", "addr", "add", host.String()+"/24", "dev", veth)
	run("ip", "link", "set", veth, "up")
	run("ip", "-n", name, "addr", "add", addr.String()+"/24", "dev", "eth0")
	run("ip", "-n", name, "link", "set", "eth0", "up")
	run("ip", "-n", name, "link", "set", "lo", "up")
	ns, err := netns.GetFromName(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Close() })
	return addr, ns
}

// listenIn opens a TCP listener inside ns: a socket stays in the namespace
// it was made in, whichever thread serves it later.
func listenIn(t *testing.T, ns netns.NsHandle, addr string) net.Listener {
	t.Helper()
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	defer orig.Close()
	if err := netns.Set(ns); err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	ln, lerr := net.Listen("tcp", addr)
	if err := netns.Set(orig); err != nil {
		// This thread is stuck in ns: leave it locked so it dies with the goroutine.
		t.Fatalf("return to the host namespace: %v", err)
	}
	runtime.UnlockOSThread()
	if lerr != nil {
		t.Fatal(lerr)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}
