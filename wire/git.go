package wire

import "time"

// GitCloneRequest is the body of POST /v1/sandboxes/{id}/git/clone.
type GitCloneRequest struct {
	URL    string `json:"url"`              // https://, http:// or file://
	Path   string `json:"path,omitempty"`   // where to clone to, absent or empty; default the repository's name
	Branch string `json:"branch,omitempty"` // check this branch out (default: the remote's HEAD)
	Depth  int    `json:"depth,omitempty"`  // a shallow clone of this many commits (0: full)
	Commit string `json:"commit,omitempty"` // then check out this commit (detached HEAD)
	// Username and Token authenticate over HTTP(S); Username defaults to
	// "git" when only a token is given (GitHub, Gitea accept any name).
	Username string `json:"username,omitempty"`
	// A password or access token for HTTP(S); never written into the repository's config unless
	// storeCredentials.
	Token string `json:"token,omitempty"`
	// StoreCredentials writes Username and Token into the sandbox
	// (~/.git-credentials, and credential.helper=store in the repository), so
	// later pushes and pulls, and a git program, need none. Default: false.
	StoreCredentials bool `json:"storeCredentials,omitempty"`
	TimeoutSeconds   int  `json:"timeoutSeconds,omitempty"` // give up after this long, at most 3600. Default: 300.
}

// GitRepoRequest names a repository: the body of status and branches.
// Every Path of a git request defaults to the working directory.
type GitRepoRequest struct {
	// The repository's worktree; a relative path starts at the workdir. By default the workdir.
	Path string `json:"path,omitempty"`
}

// GitStatus is a repository's state: the answer of clone, status, checkout,
// add and pull.
type GitStatus struct {
	Path   string          `json:"path"`   // the worktree's absolute path
	Branch string          `json:"branch"` // "" when HEAD is detached
	Head   string          `json:"head"`   // commit hash; "" before the first commit
	Clean  bool            `json:"clean"`  // nothing staged, changed or untracked
	Files  []GitFileStatus `json:"files"`  // changed, staged and untracked files, by path
	// The current branch's upstream ("origin/main"); absent when it has none.
	Upstream string `json:"upstream,omitempty"`
	// Commits of the current branch its upstream lacks.
	Ahead int `json:"ahead"`
	// Commits of the upstream the current branch lacks.
	Behind int `json:"behind"`
}

// GitFileStatus is one file that differs from HEAD. Staging and Worktree
// are each one of unmodified, untracked, modified, added, deleted, renamed,
// copied, unmerged.
type GitFileStatus struct {
	// The file's path inside the repository.
	Path string `json:"path"`
	// Its state in the index: unmodified, added, modified, deleted, renamed, copied, untracked or
	// unmerged.
	Staging string `json:"staging"`
	// Its state in the worktree: unmodified, added, modified, deleted, renamed, copied, untracked or
	// unmerged.
	Worktree string `json:"worktree"`
}

// GitBranches lists a repository's branches.
type GitBranches struct {
	Current string `json:"current"` // "" when HEAD is detached
	// The local branches.
	Local  []string `json:"local"`
	Remote []string `json:"remote"` // as "origin/main"
}

// GitCheckoutRequest is the body of POST /v1/sandboxes/{id}/git/checkout.
type GitCheckoutRequest struct {
	// The repository's worktree; a relative path starts at the workdir.
	Path string `json:"path"`
	// The branch to switch to.
	Branch string `json:"branch"`
	// Create makes Branch at HEAD first. Without it a branch only the
	// remote has ("origin/NAME") is made locally from the remote's.
	Create bool `json:"create,omitempty"`
	// Force throws away uncommitted changes; without it they refuse the
	// checkout (409 GIT_CONFLICT).
	Force bool `json:"force,omitempty"`
}

// GitAddRequest is the body of POST /v1/sandboxes/{id}/git/add.
type GitAddRequest struct {
	// The repository's worktree; a relative path starts at the workdir.
	Path  string   `json:"path"`
	Files []string `json:"files"` // paths inside the repository; "." stages every change, removals too
}

// GitCommitRequest is the body of POST /v1/sandboxes/{id}/git/commit.
type GitCommitRequest struct {
	// The repository's worktree; a relative path starts at the workdir.
	Path string `json:"path"`
	// The commit message.
	Message string `json:"message"`
	// Author defaults to user.name and user.email of the repository's
	// config, then of ~/.gitconfig; with neither the commit is refused.
	AuthorName string `json:"authorName,omitempty"`
	// The author's email (see authorName).
	AuthorEmail string `json:"authorEmail,omitempty"`
	// Commit even when nothing is staged. Default: false.
	AllowEmpty bool `json:"allowEmpty,omitempty"`
	All        bool `json:"all,omitempty"` // stage changes of tracked files first (git commit -a)
}

// GitCommit is one commit: the answer of commit, an entry of log.
type GitCommit struct {
	// The commit's full hash.
	Hash string `json:"hash"`
	// The commit message.
	Message string `json:"message"`
	// The author's name.
	AuthorName string `json:"authorName"`
	// The author's email.
	AuthorEmail string `json:"authorEmail"`
	// The author time.
	Time time.Time `json:"time"`
}

// GitSyncRequest is the body of push and pull.
type GitSyncRequest struct {
	// The repository's worktree; a relative path starts at the workdir.
	Path   string `json:"path"`
	Remote string `json:"remote,omitempty"` // the remote to push to or pull from. Default: "origin".
	Branch string `json:"branch,omitempty"` // default: the current branch
	// Username and Token as in GitCloneRequest; without them stored
	// credentials (StoreCredentials) are used if there are any.
	Username string `json:"username,omitempty"`
	// A password or access token for HTTP(S) (with username, as in a clone).
	Token string `json:"token,omitempty"`
	Force bool   `json:"force,omitempty"` // push only: overwrite the remote branch
	// Push only: make the pushed branch the local branch's upstream, as
	// git push --set-upstream.
	SetUpstream bool `json:"setUpstream,omitempty"`
	// Give up after this long (1 to 3600). Default: 300.
	TimeoutSeconds int `json:"timeoutSeconds,omitempty"`
}

// GitSyncResult is the answer of push and pull.
type GitSyncResult struct {
	UpToDate bool `json:"upToDate"` // nothing was sent or received
	// The local branch that was pushed or pulled.
	Branch string `json:"branch"`
	Head   string `json:"head"` // the local branch's commit afterwards
}

// GitLogRequest is the body of POST /v1/sandboxes/{id}/git/log.
type GitLogRequest struct {
	// The repository's worktree; a relative path starts at the workdir.
	Path  string `json:"path"`
	Limit int    `json:"limit,omitempty"` // how many commits, newest first, at most 1000. Default: 50.
}
