package agent

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Repository set-up: init, deleting a branch, listing and adding remotes.

func (s *server) gitInit(_ context.Context, req wire.GitInitRequest) (agentapi.None, error) {
	dir, err := s.path(req.Path)
	if err != nil {
		return agentapi.None{}, err
	}
	opts := &git.PlainInitOptions{Bare: req.Bare}
	if req.InitialBranch != "" {
		opts.InitOptions.DefaultBranch = plumbing.NewBranchReferenceName(req.InitialBranch)
		if err := opts.InitOptions.DefaultBranch.Validate(); err != nil {
			return agentapi.None{}, errdefs.Invalid(wire.CodeInvalidParameter, "initial branch %q: %v", req.InitialBranch, err)
		}
	}
	_, err = git.PlainInitWithOptions(dir, opts)
	return agentapi.None{}, gitError(err, dir)
}

func (s *server) gitDeleteBranch(_ context.Context, req wire.GitBranchRequest) (agentapi.None, error) {
	repo, dir, err := s.openRepo(req.Path)
	if err != nil {
		return agentapi.None{}, err
	}
	ref := plumbing.NewBranchReferenceName(req.Name)
	if _, err := repo.Reference(ref, false); err != nil {
		return agentapi.None{}, errdefs.NotFound(wire.CodeGitBranchNotFound, "%s has no branch %q", dir, req.Name)
	}
	if cur, _ := repoStatusHead(repo); cur == req.Name {
		return agentapi.None{}, errdefs.Conflict(wire.CodeGitConflict, "%q is the current branch of %s: check out another first", req.Name, dir)
	}
	if err := repo.Storer.RemoveReference(ref); err != nil {
		return agentapi.None{}, gitError(err, dir)
	}
	if err := repo.DeleteBranch(req.Name); err != nil && !errors.Is(err, git.ErrBranchNotFound) {
		return agentapi.None{}, gitError(err, dir) // its config section
	}
	return agentapi.None{}, nil
}

func (s *server) gitRemotes(_ context.Context, req wire.GitRepoRequest) ([]wire.GitRemote, error) {
	repo, dir, err := s.openRepo(req.Path)
	if err != nil {
		return nil, err
	}
	remotes, err := repo.Remotes()
	if err != nil {
		return nil, gitError(err, dir)
	}
	out := []wire.GitRemote{}
	for _, r := range remotes {
		c := r.Config()
		url := ""
		if len(c.URLs) > 0 {
			url = c.URLs[0]
		}
		out = append(out, wire.GitRemote{Name: c.Name, URL: redact(url)})
	}
	return out, nil
}

func (s *server) gitAddRemote(ctx context.Context, req wire.GitAddRemoteRequest) (agentapi.None, error) {
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
		return agentapi.None{}, errdefs.Invalid(wire.CodeInvalidParameter, "remote %q: %v", req.Name, err)
	}
	if _, err := repo.CreateRemote(rc); err != nil {
		if errors.Is(err, git.ErrRemoteExists) {
			return agentapi.None{}, errdefs.Conflict(wire.CodeGitConflict, "%s already has a remote %q: pass overwrite", dir, req.Name)
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

var resetModes = map[string]git.ResetMode{"": git.MixedReset, "mixed": git.MixedReset, "soft": git.SoftReset, "hard": git.HardReset}

func (s *server) gitReset(_ context.Context, req wire.GitResetRequest) (wire.GitStatus, error) {
	repo, wt, dir, err := s.openWorktree(req.Path)
	if err != nil {
		return wire.GitStatus{}, err
	}
	mode, ok := resetModes[req.Mode]
	if !ok {
		return wire.GitStatus{}, errdefs.Invalid(wire.CodeInvalidParameter, "reset mode %q is not soft, mixed or hard", req.Mode)
	}
	target := req.Target
	if target == "" {
		target = "HEAD"
	}
	h, err := repo.ResolveRevision(plumbing.Revision(target))
	if err != nil {
		return wire.GitStatus{}, errdefs.NotFound(wire.CodeGitBranchNotFound, "%s has no revision %q", dir, target)
	}
	if err := wt.Reset(&git.ResetOptions{Commit: *h, Mode: mode, Files: req.Files}); err != nil {
		return wire.GitStatus{}, gitError(err, dir)
	}
	return repoStatus(repo, dir)
}

func (s *server) gitRestore(_ context.Context, req wire.GitRestoreRequest) (wire.GitStatus, error) {
	repo, wt, dir, err := s.openWorktree(req.Path)
	if err != nil {
		return wire.GitStatus{}, err
	}
	if len(req.Files) == 0 {
		return wire.GitStatus{}, errdefs.Invalid(wire.CodeInvalidParameter, "files is required: the paths to restore")
	}
	if !req.Staged { // go-git restores the worktree only together with the index
		if err := restoreFromIndex(repo, wt.Filesystem.Root(), req.Files); err != nil {
			return wire.GitStatus{}, err
		}
		return repoStatus(repo, dir)
	}
	if err := wt.Restore(&git.RestoreOptions{Files: req.Files, Staged: true, Worktree: req.Worktree}); err != nil {
		return wire.GitStatus{}, gitError(err, dir)
	}
	return repoStatus(repo, dir)
}

// restoreFromIndex writes files of the worktree as the index has them.
func restoreFromIndex(repo *git.Repository, root string, files []string) error {
	idx, err := repo.Storer.Index()
	if err != nil {
		return gitError(err, root)
	}
	for _, f := range files {
		e, err := idx.Entry(filepath.ToSlash(filepath.Clean(f)))
		if err != nil {
			return errdefs.NotFound(wire.CodeFileNotFound, "%s is not in the index of %s", f, root)
		}
		blob, err := repo.BlobObject(e.Hash)
		if err != nil {
			return gitError(err, root)
		}
		rd, err := blob.Reader()
		if err != nil {
			return gitError(err, root)
		}
		mode, _ := e.Mode.ToOSFileMode()
		p := filepath.Join(root, filepath.FromSlash(e.Name))
		out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode.Perm())
		if err == nil {
			_, err = io.Copy(out, rd)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
		}
		rd.Close()
		if err != nil {
			return fsError(err, p)
		}
	}
	return nil
}
