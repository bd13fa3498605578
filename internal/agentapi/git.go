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
