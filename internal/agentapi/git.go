package agentapi

// Bodies of the git operations of internal/agent/git_repo.go.

// GitInitRequest is the body of GitInit.
type GitInitRequest struct {
	Path          string `json:"path"`
	Bare          bool   `json:"bare,omitempty"`
	InitialBranch string `json:"initialBranch,omitempty"` // default master, as git
}

// GitBranchRequest is the body of GitDeleteBranch.
type GitBranchRequest struct {
	Path string `json:"path"`
	Name string `json:"name"`
}

// GitRemote is one remote of a repository (its first URL).
type GitRemote struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// GitAddRemoteRequest is the body of GitAddRemote.
type GitAddRemoteRequest struct {
	Path      string `json:"path"`
	Name      string `json:"name"`
	URL       string `json:"url"`
	Overwrite bool   `json:"overwrite,omitempty"` // replace a remote of that name
	Fetch     bool   `json:"fetch,omitempty"`     // fetch it once added
}

// GitResetRequest is the body of GitReset: move HEAD (and the current
// branch) to Target and reset the index (mixed), also the worktree (hard),
// or neither (soft); with Files only those paths of the index.
type GitResetRequest struct {
	Path   string   `json:"path"`
	Mode   string   `json:"mode,omitempty"`   // soft, mixed (default), hard
	Target string   `json:"target,omitempty"` // a revision (hash, branch, HEAD~1); default HEAD
	Files  []string `json:"files,omitempty"`
}

// GitRestoreRequest is the body of GitRestore: Files of the worktree from
// the index (Worktree, the default) and/or of the index from HEAD (Staged).
type GitRestoreRequest struct {
	Path     string   `json:"path"`
	Files    []string `json:"files"`
	Staged   bool     `json:"staged,omitempty"`
	Worktree bool     `json:"worktree,omitempty"`
}
