package agent

import (
	"bufio"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitserver "github.com/go-git/go-git/v5/plumbing/transport/server"
	"golang.org/x/crypto/x509roots/fallback/bundle"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

const (
	defaultGitTimeout = 300 * time.Second
	maxGitTimeout     = 3600 * time.Second
)

// gitSetup runs on the first remote operation (lazy: an idle agent pays
// nothing). It makes file:// remotes work without the git-upload-pack and
// git-receive-pack programs go-git's file transport would run, and gives
// HTTPS the Mozilla roots for images without a CA bundle (Go uses them only
// when the image has no roots of its own).
var gitSetup sync.Once

func prepareRemotes() {
	gitSetup.Do(func() {
		client.InstallProtocol("file", gitserver.NewClient(localRepos{})) // git_local.go
		pool := x509.NewCertPool()
		for r := range bundle.Roots() {
			cert, err := x509.ParseCertificate(r.Certificate)
			if err != nil {
				continue
			}
			if r.Constraint == nil {
				pool.AddCert(cert)
			} else {
				pool.AddCertWithConstraint(cert, r.Constraint)
			}
		}
		x509.SetFallbackRoots(pool)
	})
}

func remoteContext(ctx context.Context, seconds int) (context.Context, context.CancelFunc, error) {
	prepareRemotes()
	d := defaultGitTimeout
	if seconds < 0 || time.Duration(seconds)*time.Second > maxGitTimeout {
		return nil, nil, errdefs.Invalid(wire.CodeInvalidTimeout, "timeoutSeconds must be between 1 and %d", int(maxGitTimeout/time.Second))
	} else if seconds > 0 {
		d = time.Duration(seconds) * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	return ctx, cancel, nil
}

func (s *server) gitClone(ctx context.Context, req wire.GitCloneRequest) (wire.GitStatus, error) {
	if req.URL == "" {
		return wire.GitStatus{}, errdefs.Invalid(wire.CodeInvalidParameter, "url is required")
	}
	if req.Depth < 0 {
		return wire.GitStatus{}, errdefs.Invalid(wire.CodeInvalidParameter, "depth must not be negative")
	}
	ep, err := transport.NewEndpoint(req.URL)
	if err != nil {
		return wire.GitStatus{}, errdefs.Invalid(wire.CodeInvalidParameter, "url %q: %v", redact(req.URL), err)
	}
	if req.Path == "" { // like git: the repository's name
		req.Path = strings.TrimSuffix(filepath.Base(ep.Path), ".git")
	}
	dir, err := s.path(req.Path)
	if err != nil {
		return wire.GitStatus{}, err
	}
	entries, err := os.ReadDir(dir)
	existed := err == nil
	if existed && len(entries) > 0 {
		return wire.GitStatus{}, errdefs.Conflict(wire.CodeGitConflict, "%s exists and is not empty: clone into a new or empty directory", dir)
	}
	ctx, cancel, err := remoteContext(ctx, req.TimeoutSeconds)
	if err != nil {
		return wire.GitStatus{}, err
	}
	defer cancel()
	opts := &git.CloneOptions{URL: req.URL, Depth: req.Depth, Auth: httpAuth(req.Username, req.Token)}
	if opts.Auth == nil {
		opts.Auth = storedAuth(req.URL) // as push and pull (syncTarget)
	}
	if req.Branch != "" {
		opts.ReferenceName, opts.SingleBranch = plumbing.NewBranchReferenceName(req.Branch), true
	}
	repo, err := git.PlainCloneContext(ctx, dir, false, opts)
	if err != nil {
		clearOrRemove(dir, existed) // leave nothing half-cloned behind
		if errors.Is(err, plumbing.ErrReferenceNotFound) && req.Branch != "" {
			return wire.GitStatus{}, errdefs.NotFound(wire.CodeGitBranchNotFound, "%s has no branch %q", redact(req.URL), req.Branch)
		}
		return wire.GitStatus{}, remoteError(ctx, err, req.URL)
	}
	if req.Commit != "" {
		wt, err := repo.Worktree()
		if err == nil {
			err = wt.Checkout(&git.CheckoutOptions{Hash: plumbing.NewHash(req.Commit)})
		}
		if err != nil || !plumbing.IsHash(req.Commit) {
			clearOrRemove(dir, existed)
			return wire.GitStatus{}, errdefs.NotFound(wire.CodeGitBranchNotFound, "%s has no commit %q (a full 40-hex hash)", redact(req.URL), req.Commit)
		}
	}
	if req.StoreCredentials && req.Token != "" {
		if err := storeCredentials(repo, req.URL, opts.Auth.(*githttp.BasicAuth)); err != nil {
			return wire.GitStatus{}, err
		}
	}
	return repoStatus(repo, dir)
}

func clearOrRemove(dir string, existed bool) {
	if !existed {
		os.RemoveAll(dir)
		return
	}
	clearDir(dir)
}

func clearDir(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// syncTarget resolves the remote and branch of a push or pull and their
// credentials: those passed, else those stored for the remote's URL.
func (s *server) syncTarget(req wire.GitSyncRequest) (repo *git.Repository, dir, remote, branch, remoteURL string, auth transport.AuthMethod, err error) {
	repo, dir, err = s.openRepo(req.Path)
	if err != nil {
		return
	}
	remote, branch = req.Remote, req.Branch
	if remote == "" {
		remote = "origin"
	}
	if branch == "" {
		if branch, err = repoStatusHead(repo); err != nil || branch == "" {
			err = errdefs.Conflict(wire.CodeGitConflict, "%s has no current branch (detached HEAD?): name the branch", dir)
			return
		}
	}
	r, rerr := repo.Remote(remote)
	if rerr != nil {
		err = errdefs.NotFound(wire.CodeGitRemoteNotFound, "%s has no remote %q", dir, remote)
		return
	}
	if urls := r.Config().URLs; len(urls) > 0 {
		remoteURL = urls[0]
	}
	auth = httpAuth(req.Username, req.Token)
	if auth == nil {
		auth = storedAuth(remoteURL)
	}
	return
}

func (s *server) gitPush(ctx context.Context, req wire.GitSyncRequest) (wire.GitSyncResult, error) {
	repo, dir, remote, branch, url, auth, err := s.syncTarget(req)
	if err != nil {
		return wire.GitSyncResult{}, err
	}
	ctx, cancel, err := remoteContext(ctx, req.TimeoutSeconds)
	if err != nil {
		return wire.GitSyncResult{}, err
	}
	defer cancel()
	ref := plumbing.NewBranchReferenceName(branch)
	local, err := repo.Reference(ref, true)
	if err != nil {
		return wire.GitSyncResult{}, errdefs.NotFound(wire.CodeGitBranchNotFound, "%s has no branch %q (no commit yet?)", dir, branch)
	}
	spec := config.RefSpec(ref.String() + ":" + ref.String())
	if req.Force {
		spec = "+" + spec
	}
	err = repo.PushContext(ctx, &git.PushOptions{RemoteName: remote, RefSpecs: []config.RefSpec{spec}, Auth: auth})
	res := wire.GitSyncResult{Branch: branch, Head: local.Hash().String(), UpToDate: errors.Is(err, git.NoErrAlreadyUpToDate)}
	if err != nil && !res.UpToDate {
		return res, remoteError(ctx, err, url)
	}
	if req.SetUpstream {
		if err := setUpstream(repo, remote, branch); err != nil { // git_track.go
			return res, gitError(err, dir)
		}
	}
	return res, nil
}

func (s *server) gitPull(ctx context.Context, req wire.GitSyncRequest) (wire.GitSyncResult, error) {
	if req.Force || req.SetUpstream {
		return wire.GitSyncResult{}, errdefs.Invalid(wire.CodeInvalidParameter, "force and setUpstream are for push only")
	}
	repo, dir, remote, branch, url, auth, err := s.syncTarget(req)
	if err != nil {
		return wire.GitSyncResult{}, err
	}
	wt, err := repo.Worktree()
	if err != nil {
		return wire.GitSyncResult{}, gitError(err, dir)
	}
	ctx, cancel, err := remoteContext(ctx, req.TimeoutSeconds)
	if err != nil {
		return wire.GitSyncResult{}, err
	}
	defer cancel()
	err = wt.PullContext(ctx, &git.PullOptions{RemoteName: remote, ReferenceName: plumbing.NewBranchReferenceName(branch), SingleBranch: true, Auth: auth})
	res := wire.GitSyncResult{Branch: branch, UpToDate: errors.Is(err, git.NoErrAlreadyUpToDate)}
	if err != nil && !res.UpToDate {
		return res, remoteError(ctx, err, url)
	}
	if head, err := repo.Head(); err == nil {
		res.Head = head.Hash().String()
	}
	return res, nil
}

// httpAuth is basic auth for HTTP(S) remotes, nil without a token; a token
// alone goes with the user name "git" (forges ignore the name).
func httpAuth(username, token string) transport.AuthMethod {
	if token == "" && username == "" {
		return nil
	}
	if username == "" {
		username = "git"
	}
	return &githttp.BasicAuth{Username: username, Password: token}
}

// credentialsFile is git's credential store (credential.helper=store).
func credentialsFile() string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		home = "/root"
	}
	return filepath.Join(home, ".git-credentials")
}

// storeCredentials keeps auth for rawURL's host in git's credential store
// (0600) and turns the store on in repo's config, for later calls without
// credentials and for a git program in the sandbox.
func storeCredentials(repo *git.Repository, rawURL string, auth *githttp.BasicAuth) error {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return errdefs.Invalid(wire.CodeInvalidParameter, "storeCredentials needs an http(s) url")
	}
	line := (&url.URL{Scheme: u.Scheme, User: url.UserPassword(auth.Username, auth.Password), Host: u.Host}).String()
	f, err := os.OpenFile(credentialsFile(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fsError(err, credentialsFile())
	}
	_, err = fmt.Fprintln(f, line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fsError(err, credentialsFile())
	}
	cfg, err := repo.Config()
	if err != nil {
		return gitError(err, "")
	}
	cfg.Raw.Section("credential").SetOption("helper", "store")
	return gitError(repo.SetConfig(cfg), "")
}

// storedAuth finds credentials for rawURL's scheme and host in git's
// credential store; the latest line wins, as git's store appends.
func storedAuth(rawURL string) transport.AuthMethod {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil
	}
	f, err := os.Open(credentialsFile())
	if err != nil {
		return nil
	}
	defer f.Close()
	var auth transport.AuthMethod
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		c, err := url.Parse(strings.TrimSpace(sc.Text()))
		if err != nil || c.User == nil || c.Scheme != u.Scheme || c.Host != u.Host {
			continue
		}
		pw, _ := c.User.Password()
		auth = &githttp.BasicAuth{Username: c.User.Username(), Password: pw}
	}
	return auth
}

// redact drops credentials from a URL before it goes into a message.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = url.User("***")
	return u.String()
}

// remoteError names the failure of a clone, push or pull.
func remoteError(ctx context.Context, err error, remoteURL string) error {
	where := redact(remoteURL)
	var netErr *net.OpError
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed):
		return errdefs.Invalid(wire.CodeGitAuthFailed, "%s refused the credentials (%v): pass a username and a token that may access it", where, err)
	case errors.Is(err, transport.ErrRepositoryNotFound):
		return errdefs.NotFound(wire.CodeGitRemoteNotFound, "%s: repository not found (or the credentials may not see it)", where)
	case ctx.Err() != nil:
		return errdefs.Unavailable(wire.CodeGitRemoteUnreachable, "%s did not finish within the timeout (timeoutSeconds)", where)
	case errors.As(err, &netErr), errors.As(err, &dnsErr):
		return errdefs.Unavailable(wire.CodeGitRemoteUnreachable, "cannot reach %s: %v (is it allowed by the sandbox's egress policy?)", where, err)
	}
	return gitError(err, where)
}

// gitError names a git failure with the code a caller can act on.
func gitError(err error, where string) error {
	var e *errdefs.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e):
		return err
	case errors.Is(err, git.ErrRepositoryNotExists):
		return errdefs.NotFound(wire.CodeGitNotARepository, "%s is not in a git repository", where)
	case errors.Is(err, git.ErrNonFastForwardUpdate), errors.Is(err, git.ErrForceNeeded),
		errors.Is(err, git.ErrUnstagedChanges), errors.Is(err, git.ErrWorktreeNotClean),
		errors.Is(err, git.ErrBranchExists), errors.Is(err, git.ErrRepositoryAlreadyExists),
		strings.Contains(err.Error(), "non-fast-forward"):
		return errdefs.Conflict(wire.CodeGitConflict, "%s: %v", where, err)
	case errors.Is(err, plumbing.ErrReferenceNotFound), errors.Is(err, git.ErrBranchNotFound):
		return errdefs.NotFound(wire.CodeGitBranchNotFound, "%s: %v", where, err)
	case errors.Is(err, git.ErrEmptyCommit):
		return errdefs.Conflict(wire.CodeGitConflict, "%s: nothing to commit (stage changes with add, or pass allowEmpty)", where)
	case errors.Is(err, transport.ErrEmptyRemoteRepository):
		return errdefs.Conflict(wire.CodeGitConflict, "%s: the remote repository is empty", where)
	}
	return errdefs.Invalid(wire.CodeGitFailed, "%s: %v", where, err)
}
