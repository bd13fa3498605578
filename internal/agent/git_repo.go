package agent

import (
	"context"
	"errors"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/sdk"
)

// Repository set-up: init, deleting a branch, listing and adding remotes.

func (s *server) gitInit(_ context.Context, req agentapi.GitInitRequest) (agentapi.None, error) {
	dir, err := s.path(req.Path)
	if err != nil {
		return agentapi.None{}, err
	}
	opts := &git.PlainInitOptions{Bare: req.Bare}
	if req.InitialBranch != "" {
		opts.InitOptions.DefaultBranch = plumbing.NewBranchReferenceName(req.InitialBranch)
		if err := opts.InitOptions.DefaultBranch.Validate(); err != nil {
			return agentapi.None{}, errdefs.Invalid(sdk.CodeInvalidParameter, "initial branch %q: %v", req.InitialBranch, err)
		}
	}
	_, err = git.PlainInitWithOptions(dir, opts)
	return agentapi.None{}, gitError(err, dir)
}

func (s *server) gitDeleteBranch(_ context.Context, req agentapi.GitBranchRequest) (agentapi.None, error) {
	repo, dir, err := s.openRepo(req.Path)
	if err != nil {
		return agentapi.None{}, err
	}
	ref := plumbing.NewBranchReferenceName(req.Name)
	if _, err := repo.Reference(ref, false); err != nil {
		return agentapi.None{}, errdefs.NotFound(sdk.CodeGitBranchNotFound, "%s has no branch %q", dir, req.Name)
	}
	if cur, _ := repoStatusHead(repo); cur == req.Name {
		return agentapi.None{}, errdefs.Conflict(sdk.CodeGitConflict, "%q is the current branch of %s: check out another first", req.Name, dir)
	}
	if err := repo.Storer.RemoveReference(ref); err != nil {
		return agentapi.None{}, gitError(err, dir)
	}
	if err := repo.DeleteBranch(req.Name); err != nil && !errors.Is(err, git.ErrBranchNotFound) {
		return agentapi.None{}, gitError(err, dir) // its config section
	}
	return agentapi.None{}, nil
}

func (s *server) gitRemotes(_ context.Context, req sdk.GitRepoRequest) ([]agentapi.GitRemote, error) {
	repo, dir, err := s.openRepo(req.Path)
	if err != nil {
		return nil, err
	}
	remotes, err := repo.Remotes()
	if err != nil {
		return nil, gitError(err, dir)
	}
	out := []agentapi.GitRemote{}
	for _, r := range remotes {
		c := r.Config()
		url := ""
		if len(c.URLs) > 0 {
			url = c.URLs[0]
		}
		out = append(out, agentapi.GitRemote{Name: c.Name, URL: redact(url)})
	}
	return out, nil
}

func (s *server) gitAddRemote(ctx context.Context, req agentapi.GitAddRemoteRequest) (agentapi.None, error) {
	repo, dir, err := s.openRepo(req.Path)
	if err != nil {
		return agentapi.None{}, err
	}
	if req.Overwrite {
		if err := repo.DeleteRemote(req.Name); err != nil && !errors.Is(err, git.ErrRemoteNotFound) {
			return agentapi.None{}, gitError(err, dir)
		}
	}
	rc := &config.RemoteConfig{Name: req.Name, URLs: []string{req.URL}}
	if err := rc.Validate(); err != nil {
		return agentapi.None{}, errdefs.Invalid(sdk.CodeInvalidParameter, "remote %q: %v", req.Name, err)
	}
	if _, err := repo.CreateRemote(rc); err != nil {
		if errors.Is(err, git.ErrRemoteExists) {
			return agentapi.None{}, errdefs.Conflict(sdk.CodeGitConflict, "%s already has a remote %q: pass overwrite", dir, req.Name)
		}
		return agentapi.None{}, gitError(err, dir)
	}
	if !req.Fetch {
		return agentapi.None{}, nil
	}
	ctx, cancel, err := remoteContext(ctx, 0)
	if err != nil {
		return agentapi.None{}, err
	}
	defer cancel()
	err = repo.FetchContext(ctx, &git.FetchOptions{RemoteName: req.Name, Auth: storedAuth(req.URL)})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) && !errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return agentapi.None{}, remoteError(ctx, err, req.URL)
	}
	return agentapi.None{}, nil
}
