package agent

import (
	"os"
	"path/filepath"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	gitserver "github.com/go-git/go-git/v5/plumbing/transport/server"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// localRepos serves file:// remotes from the sandbox's disk. go-git's own
// loader (gitserver.DefaultLoader) opens a non-bare repository's worktree
// as if it were the git directory and finds it empty; git itself serves
// <path>/.git, and so does this.
type localRepos struct{}

func (localRepos) Load(ep *transport.Endpoint) (storer.Storer, error) {
	dir := ep.Path
	if fi, err := os.Stat(filepath.Join(dir, ".git")); err == nil && fi.IsDir() {
		dir = filepath.Join(dir, ".git")
	} else if _, err := os.Stat(filepath.Join(dir, "config")); err != nil {
		return nil, transport.ErrRepositoryNotFound
	}
	return filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault()), nil
}

var _ gitserver.Loader = localRepos{}
