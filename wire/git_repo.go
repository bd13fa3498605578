package wire

// GitInitRequest is the body of POST …/git/init.
type GitInitRequest struct {
	// The directory to make the repository in.
	Path string `json:"path"`
	// Make a bare repository (no worktree).
	Bare bool `json:"bare,omitempty"`
	// The first branch's name. Default: "master".
	InitialBranch string `json:"initialBranch,omitempty"`
}

// GitBranchRequest is the body of POST …/git/branches/delete.
type GitBranchRequest struct {
	// The repository's directory.
	Path string `json:"path"`
	// The branch to delete (not the current one).
	Name string `json:"name"`
}

// GitRemote is one remote of a repository (its first URL).
type GitRemote struct {
	// The remote's name, e.g. origin.
	Name string `json:"name"`
	// Its first URL, credentials removed.
	URL string `json:"url"`
}

// GitAddRemoteRequest is the body of POST …/git/remotes.
type GitAddRemoteRequest struct {
	// The repository's directory.
	Path string `json:"path"`
	// The remote's name.
	Name string `json:"name"`
	// The remote's URL.
	URL string `json:"url"`
	// Replace a remote of that name instead of refusing.
	Overwrite bool `json:"overwrite,omitempty"`
	// Fetch the remote once it is added.
	Fetch bool `json:"fetch,omitempty"`
}

// GitResetRequest is the body of POST …/git/reset: move HEAD (and the
// current branch) to Target and reset the index (mixed), also the worktree
// (hard), or neither (soft); with Files only those paths of the index.
type GitResetRequest struct {
	// The repository's directory.
	Path string `json:"path"`
	// soft, mixed or hard. Default: "mixed".
	Mode string `json:"mode,omitempty"`
	// A revision (hash, branch, HEAD~1). Default: "HEAD".
	Target string `json:"target,omitempty"`
	// Reset only these paths of the index; empty: all.
	Files []string `json:"files,omitempty"`
}

// GitRestoreRequest is the body of POST …/git/restore: Files of the
// worktree from the index (Worktree, the default) and/or of the index from
// HEAD (Staged).
type GitRestoreRequest struct {
	// The repository's directory.
	Path string `json:"path"`
	// The paths to restore.
	Files []string `json:"files"`
	// Restore the index from HEAD (unstage).
	Staged bool `json:"staged,omitempty"`
	// Restore the worktree from the index (the default when neither is set).
	Worktree bool `json:"worktree,omitempty"`
}
