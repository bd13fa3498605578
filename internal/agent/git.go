package agent

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// git in the toolbox, run with go-git inside the agent: it works in any
// image, git program or not. The agent runs as the sandbox's root, so what
// git writes belongs to root inside the sandbox. Nothing here runs until a
// git route is called, so an idle agent pays only for the code's size.
// Remote operations (clone, push, pull) and their credentials: git_remote.go.

// gitHandler decodes a request of type Req, runs f and answers its value.
func gitHandler[Req, Res any](f func(context.Context, Req) (Res, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req Req
		if err := decodeJSON(w, r, &req); err != nil {
			writeError(w, err)
			return
		}
		v, err := f(r.Context(), req)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, v)
	}
}

// openRepo opens the repository whose worktree holds path (default: the
// working directory).
func (s *server) openRepo(path string) (*git.Repository, string, error) {
	if path == "" {
		path = "."
	}
	dir, err := s.path(path)
	if err != nil {
		return nil, "", err
	}
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true}) // linked worktrees too
	if err != nil {
		return nil, dir, gitError(err, dir)
	}
	return repo, dir, nil
}

// openWorktree is openRepo and the repository's worktree.
func (s *server) openWorktree(path string) (*git.Repository, *git.Worktree, string, error) {
	repo, dir, err := s.openRepo(path)
	if err != nil {
		return nil, nil, dir, err
	}
	wt, err := repo.Worktree()
	if err != nil {
		return nil, nil, dir, gitError(err, dir)
	}
	return repo, wt, dir, nil
}

func (s *server) gitStatus(_ context.Context, req wire.GitRepoRequest) (wire.GitStatus, error) {
	repo, dir, err := s.openRepo(req.Path)
	if err != nil {
		return wire.GitStatus{}, err
	}
	return repoStatus(repo, dir)
}

// repoStatus describes repo's HEAD and the files that differ from it.
func repoStatus(repo *git.Repository, dir string) (wire.GitStatus, error) {
	st := wire.GitStatus{Path: dir, Files: []wire.GitFileStatus{}}
	wt, err := repo.Worktree()
	if err != nil {
		return st, gitError(err, dir)
	}
	st.Path = wt.Filesystem.Root()
	if head, err := repo.Head(); err == nil {
		st.Head = head.Hash().String()
		if head.Name().IsBranch() {
			st.Branch = head.Name().Short()
		}
	} else if errors.Is(err, plumbing.ErrReferenceNotFound) {
		// No commit yet: HEAD names a branch that does not exist.
		if ref, err := repo.Storer.Reference(plumbing.HEAD); err == nil && ref.Target().IsBranch() {
			st.Branch = ref.Target().Short()
		}
	} else {
		return st, gitError(err, dir)
	}
	status, err := wt.Status()
	if err != nil {
		return st, gitError(err, dir)
	}
	for path, fs := range status {
		if fs.Staging == git.Unmodified && fs.Worktree == git.Unmodified {
			continue
		}
		st.Files = append(st.Files, wire.GitFileStatus{Path: path, Staging: statusName(fs.Staging), Worktree: statusName(fs.Worktree)})
	}
	sort.Slice(st.Files, func(i, j int) bool { return st.Files[i].Path < st.Files[j].Path })
	st.Clean = len(st.Files) == 0
	return st, tracking(repo, &st) // git_track.go
}

func statusName(c git.StatusCode) string {
	switch c {
	case git.Untracked:
		return "untracked"
	case git.Modified:
		return "modified"
	case git.Added:
		return "added"
	case git.Deleted:
		return "deleted"
	case git.Renamed:
		return "renamed"
	case git.Copied:
		return "copied"
	case git.UpdatedButUnmerged:
		return "unmerged"
	}
	return "unmodified"
}

func (s *server) gitBranches(_ context.Context, req wire.GitRepoRequest) (wire.GitBranches, error) {
	repo, dir, err := s.openRepo(req.Path)
	if err != nil {
		return wire.GitBranches{}, err
	}
	st, err := repoStatusHead(repo)
	if err != nil {
		return wire.GitBranches{}, gitError(err, dir)
	}
	out := wire.GitBranches{Current: st, Local: []string{}, Remote: []string{}}
	refs, err := repo.References()
	if err != nil {
		return out, gitError(err, dir)
	}
	err = refs.ForEach(func(ref *plumbing.Reference) error {
		switch {
		case ref.Name().IsBranch():
			out.Local = append(out.Local, ref.Name().Short())
		case ref.Name().IsRemote() && !strings.HasSuffix(ref.Name().String(), "/HEAD"):
			out.Remote = append(out.Remote, ref.Name().Short())
		}
		return nil
	})
	sort.Strings(out.Local)
	sort.Strings(out.Remote)
	return out, gitError(err, dir)
}

// repoStatusHead is the current branch's name, "" when HEAD is detached.
func repoStatusHead(repo *git.Repository) (string, error) {
	ref, err := repo.Storer.Reference(plumbing.HEAD)
	if err != nil {
		return "", err
	}
	if ref.Type() == plumbing.SymbolicReference && ref.Target().IsBranch() {
		return ref.Target().Short(), nil
	}
	return "", nil
}

func (s *server) gitCheckout(_ context.Context, req wire.GitCheckoutRequest) (wire.GitStatus, error) {
	if req.Branch == "" {
		return wire.GitStatus{}, errdefs.Invalid(wire.CodeInvalidParameter, "branch is required")
	}
	repo, wt, dir, err := s.openWorktree(req.Path)
	if err != nil {
		return wire.GitStatus{}, err
	}
	name := plumbing.NewBranchReferenceName(req.Branch)
	opts := &git.CheckoutOptions{Branch: name, Create: req.Create, Force: req.Force}
	if !req.Create {
		if _, err := repo.Reference(name, false); errors.Is(err, plumbing.ErrReferenceNotFound) {
			// Only a remote has it: make the local branch from the remote's, as git does.
			remote, rerr := repo.Reference(plumbing.NewRemoteReferenceName("origin", req.Branch), true)
			if rerr != nil {
				return wire.GitStatus{}, errdefs.NotFound(wire.CodeGitBranchNotFound, "no branch %q in %s, and origin has none either", req.Branch, dir)
			}
			opts.Create, opts.Hash = true, remote.Hash()
		}
	}
	if !req.Force {
		// Refuse like git does when tracked files have uncommitted changes,
		// staged ones included (go-git checks only the worktree).
		status, err := wt.Status()
		if err != nil {
			return wire.GitStatus{}, gitError(err, dir)
		}
		for path, fs := range status {
			if fs.Worktree != git.Untracked && (fs.Staging != git.Unmodified || fs.Worktree != git.Unmodified) {
				return wire.GitStatus{}, errdefs.Conflict(wire.CodeGitConflict, "%s has uncommitted changes (%s): commit them, or check out with force to throw them away", dir, path)
			}
		}
	}
	if err := wt.Checkout(opts); err != nil {
		return wire.GitStatus{}, gitError(err, dir)
	}
	if opts.Create && opts.Hash != plumbing.ZeroHash {
		// Track the remote branch, so pull and push know where to go.
		cfg, err := repo.Config()
		if err == nil {
			cfg.Branches[req.Branch] = &config.Branch{Name: req.Branch, Remote: "origin", Merge: name}
			repo.SetConfig(cfg)
		}
	}
	return repoStatus(repo, dir)
}

func (s *server) gitAdd(_ context.Context, req wire.GitAddRequest) (wire.GitStatus, error) {
	if len(req.Files) == 0 {
		return wire.GitStatus{}, errdefs.Invalid(wire.CodeInvalidParameter, "files is required (\".\" stages every change)")
	}
	repo, wt, dir, err := s.openWorktree(req.Path)
	if err != nil {
		return wire.GitStatus{}, err
	}
	for _, f := range req.Files {
		if f == "." || f == "" {
			err = wt.AddWithOptions(&git.AddOptions{All: true})
		} else {
			_, err = wt.Add(f)
		}
		if err != nil {
			return wire.GitStatus{}, gitError(err, dir)
		}
	}
	return repoStatus(repo, dir)
}

func (s *server) gitCommit(_ context.Context, req wire.GitCommitRequest) (wire.GitCommit, error) {
	if strings.TrimSpace(req.Message) == "" {
		return wire.GitCommit{}, errdefs.Invalid(wire.CodeInvalidParameter, "message is required")
	}
	repo, wt, dir, err := s.openWorktree(req.Path)
	if err != nil {
		return wire.GitCommit{}, err
	}
	author, err := commitAuthor(repo, req.AuthorName, req.AuthorEmail)
	if err != nil {
		return wire.GitCommit{}, err
	}
	hash, err := wt.Commit(req.Message, &git.CommitOptions{All: req.All, AllowEmptyCommits: req.AllowEmpty, Author: author})
	if err != nil {
		return wire.GitCommit{}, gitError(err, dir)
	}
	c, err := repo.CommitObject(hash)
	if err != nil {
		return wire.GitCommit{}, gitError(err, dir)
	}
	return commitInfo(c), nil
}

// commitAuthor is the given author, else user.name and user.email of the
// repository's config and then the global one.
func commitAuthor(repo *git.Repository, name, email string) (*object.Signature, error) {
	if name == "" || email == "" {
		if cfg, err := repo.ConfigScoped(config.GlobalScope); err == nil {
			if name == "" {
				name = cfg.User.Name
			}
			if email == "" {
				email = cfg.User.Email
			}
		}
	}
	if name == "" || email == "" {
		return nil, errdefs.Invalid(wire.CodeInvalidParameter, "no author: pass authorName and authorEmail, or set user.name and user.email in the repository's or the global git config")
	}
	return &object.Signature{Name: name, Email: email, When: time.Now()}, nil
}

func commitInfo(c *object.Commit) wire.GitCommit {
	return wire.GitCommit{Hash: c.Hash.String(), Message: c.Message, AuthorName: c.Author.Name,
		AuthorEmail: c.Author.Email, Time: c.Author.When.UTC()}
}

const (
	defaultLogLimit = 50
	maxLogLimit     = 1000
)

func (s *server) gitLog(_ context.Context, req wire.GitLogRequest) ([]wire.GitCommit, error) {
	limit := req.Limit
	switch {
	case limit < 0 || limit > maxLogLimit:
		return nil, errdefs.Invalid(wire.CodeInvalidParameter, "limit must be between 1 and %d", maxLogLimit)
	case limit == 0:
		limit = defaultLogLimit
	}
	repo, dir, err := s.openRepo(req.Path)
	if err != nil {
		return nil, err
	}
	out := []wire.GitCommit{}
	head, err := repo.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return out, nil // no commit yet
	} else if err != nil {
		return nil, gitError(err, dir)
	}
	commits, err := repo.Log(&git.LogOptions{From: head.Hash()})
	if err != nil {
		return nil, gitError(err, dir)
	}
	defer commits.Close()
	err = commits.ForEach(func(c *object.Commit) error {
		out = append(out, commitInfo(c))
		if len(out) == limit {
			return storer.ErrStop
		}
		return nil
	})
	return out, gitError(err, dir)
}
