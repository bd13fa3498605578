package agent

import (
	"errors"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// The current branch's upstream, as git status -b shows it: the branch
// named by branch.<name>.remote and .merge, and how many commits each side
// has that the other has not.

// maxTrackWalk bounds the commits walked on each side to count them.
const maxTrackWalk = 1 << 20

// tracking fills st's Upstream, Ahead and Behind; a branch without an
// upstream, or whose upstream was never fetched, has none.
func tracking(repo *git.Repository, st *wire.GitStatus) error {
	if st.Branch == "" || st.Head == "" {
		return nil
	}
	cfg, err := repo.Config()
	if err != nil {
		return gitError(err, st.Path)
	}
	b := cfg.Branches[st.Branch]
	if b == nil || b.Remote == "" || b.Remote == "." || !b.Merge.IsBranch() {
		return nil
	}
	up, err := repo.Reference(plumbing.NewRemoteReferenceName(b.Remote, b.Merge.Short()), true)
	if err != nil {
		return nil // configured but not fetched or pushed yet
	}
	st.Upstream = b.Remote + "/" + b.Merge.Short()
	head := plumbing.NewHash(st.Head)
	if head == up.Hash() {
		return nil
	}
	mine, err := ancestors(repo, head)
	if err != nil {
		return err
	}
	theirs, err := ancestors(repo, up.Hash())
	if err != nil {
		return err
	}
	for h := range mine {
		if _, ok := theirs[h]; !ok {
			st.Ahead++
		}
	}
	for h := range theirs {
		if _, ok := mine[h]; !ok {
			st.Behind++
		}
	}
	return nil
}

var errTooManyCommits = errors.New("too many commits")

func ancestors(repo *git.Repository, h plumbing.Hash) (map[plumbing.Hash]struct{}, error) {
	c, err := repo.CommitObject(h)
	if err != nil {
		return nil, gitError(err, h.String())
	}
	seen := map[plumbing.Hash]struct{}{}
	err = object.NewCommitPreorderIter(c, nil, nil).ForEach(func(c *object.Commit) error {
		seen[c.Hash] = struct{}{}
		if len(seen) > maxTrackWalk {
			return errTooManyCommits
		}
		return nil
	})
	if errors.Is(err, errTooManyCommits) {
		return nil, errdefs.Invalid(wire.CodeGitFailed, "more than %d commits to compare with the upstream", maxTrackWalk)
	}
	return seen, err
}

// setUpstream makes remote/branch the upstream of branch, as git push
// --set-upstream does.
func setUpstream(repo *git.Repository, remote, branch string) error {
	cfg, err := repo.Config()
	if err != nil {
		return err
	}
	cfg.Branches[branch] = &config.Branch{Name: branch, Remote: remote, Merge: plumbing.NewBranchReferenceName(branch)}
	return repo.SetConfig(cfg)
}
