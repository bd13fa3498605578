package daytona

import (
	"net/http"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/wire"
)

// git: Daytona's toolbox git routes onto the agent's git (go-git, so it
// works in any image, no git binary needed); config in gitconfig.go. Not
// served: stored credentials (dangerouslyAuthenticate).

// gitStatusNames are Daytona's names of sbx's file states.
var gitStatusNames = map[string]string{
	"unmodified": "Unmodified", "untracked": "Untracked", "modified": "Modified", "added": "Added",
	"deleted": "Deleted", "renamed": "Renamed", "copied": "Copied", "unmerged": "Updated but unmerged",
}

// gitCall sends one git request to the agent of the request's sandbox.
func gitCall[Out any](h *Handler, r *http.Request, route agentapi.Route, in any) (Out, error) {
	c, _, err := h.agentFor(r)
	if err != nil {
		var zero Out
		return zero, err
	}
	return agentapi.Call[Out](r.Context(), c, route, agentapi.Params{}, in)
}

func (h *Handler) gitClone(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		URL             string `json:"url"`
		Path            string `json:"path"`
		Branch          string `json:"branch"`
		CommitID        string `json:"commit_id"`
		Username        string `json:"username"`
		Password        string `json:"password"`
		Depth           int    `json:"depth"`
		InsecureSkipTLS bool   `json:"insecure_skip_tls"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	switch {
	case in.URL == "":
		return invalid(wire.CodeInvalidParameter, "url is required")
	case in.CommitID != "":
		return invalid(wire.CodeFeatureUnsupported, "cloning at a commit (commitId) is not supported on sbx: clone, then check out a branch")
	case in.InsecureSkipTLS:
		return invalid(wire.CodeFeatureUnsupported, "insecureSkipTls is not supported on sbx")
	}
	req := wire.GitCloneRequest{URL: in.URL, Path: in.Path, Branch: in.Branch, Depth: in.Depth, Username: in.Username, Token: in.Password}
	if _, err := gitCall[none](h, r, agentapi.GitClone, req); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func repoPath(r *http.Request) (string, error) {
	p := r.URL.Query().Get("path")
	if p == "" {
		return "", invalid(wire.CodeInvalidPath, "path is required: the repository's directory")
	}
	return p, nil
}

func (h *Handler) gitStatus(w http.ResponseWriter, r *http.Request) error {
	p, err := repoPath(r)
	if err != nil {
		return err
	}
	st, err := gitCall[wire.GitStatus](h, r, agentapi.GitStatus, wire.GitRepoRequest{Path: p})
	if err != nil {
		return err
	}
	type fileStatus struct {
		Name     string `json:"name"`
		Staging  string `json:"staging"`
		Worktree string `json:"worktree"`
		Extra    string `json:"extra"`
	}
	files := []fileStatus{}
	for _, f := range st.Files {
		files = append(files, fileStatus{Name: f.Path, Staging: gitStatusNames[f.Staging], Worktree: gitStatusNames[f.Worktree]})
	}
	writeJSON(w, http.StatusOK, map[string]any{"currentBranch": st.Branch, "detached": st.Branch == "",
		"fileStatus": files, "ahead": st.Ahead, "behind": st.Behind, "branchPublished": st.Upstream != ""})
	return nil
}

func (h *Handler) gitBranches(w http.ResponseWriter, r *http.Request) error {
	p, err := repoPath(r)
	if err != nil {
		return err
	}
	b, err := gitCall[wire.GitBranches](h, r, agentapi.GitBranches, wire.GitRepoRequest{Path: p})
	if err != nil {
		return err
	}
	branches := b.Local
	if branches == nil {
		branches = []string{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"branches": branches, "current": b.Current})
	return nil
}

// gitCreateBranch makes a branch at HEAD without switching to it, as
// Daytona's createBranch does: the agent creates by checking out, so the
// current branch is checked out again afterwards.
func (h *Handler) gitCreateBranch(w http.ResponseWriter, r *http.Request) error {
	var in struct{ Path, Name string }
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if in.Path == "" || in.Name == "" {
		return invalid(wire.CodeInvalidParameter, "path and name are required")
	}
	st, err := gitCall[wire.GitStatus](h, r, agentapi.GitStatus, wire.GitRepoRequest{Path: in.Path})
	if err != nil {
		return err
	}
	if st.Branch == "" {
		return invalid(wire.CodeFeatureUnsupported, "creating a branch while HEAD is detached is not supported on sbx")
	}
	if _, err := gitCall[none](h, r, agentapi.GitCheckout, wire.GitCheckoutRequest{Path: in.Path, Branch: in.Name, Create: true}); err != nil {
		return err
	}
	if _, err := gitCall[none](h, r, agentapi.GitCheckout, wire.GitCheckoutRequest{Path: in.Path, Branch: st.Branch}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusCreated)
	return nil
}

func (h *Handler) gitCheckout(w http.ResponseWriter, r *http.Request) error {
	var in struct{ Path, Branch string }
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if _, err := gitCall[none](h, r, agentapi.GitCheckout, wire.GitCheckoutRequest{Path: in.Path, Branch: in.Branch}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (h *Handler) gitAdd(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Path  string   `json:"path"`
		Files []string `json:"files"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if _, err := gitCall[none](h, r, agentapi.GitAdd, wire.GitAddRequest{Path: in.Path, Files: in.Files}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (h *Handler) gitCommit(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Path       string `json:"path"`
		Message    string `json:"message"`
		Author     string `json:"author"`
		Email      string `json:"email"`
		AllowEmpty bool   `json:"allow_empty"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	req := wire.GitCommitRequest{Path: in.Path, Message: in.Message, AuthorName: in.Author, AuthorEmail: in.Email, AllowEmpty: in.AllowEmpty}
	c, err := gitCall[wire.GitCommit](h, r, agentapi.GitCommit, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"hash": c.Hash})
	return nil
}

type gitSyncIn struct {
	Path     string `json:"path"`
	Username string `json:"username"`
	Password string `json:"password"`
	Branch   string `json:"branch"`
	Remote   string `json:"remote"`
}

func (in gitSyncIn) request() wire.GitSyncRequest {
	return wire.GitSyncRequest{Path: in.Path, Remote: in.Remote, Branch: in.Branch, Username: in.Username, Token: in.Password}
}

func (h *Handler) gitPush(w http.ResponseWriter, r *http.Request) error {
	var in gitSyncIn
	if err := decode(w, r, &in); err != nil {
		return err
	}
	req := in.request()
	req.SetUpstream = true // Daytona's push publishes the branch as its upstream
	if _, err := gitCall[none](h, r, agentapi.GitPush, req); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (h *Handler) gitPull(w http.ResponseWriter, r *http.Request) error {
	var in gitSyncIn
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if _, err := gitCall[none](h, r, agentapi.GitPull, in.request()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (h *Handler) gitHistory(w http.ResponseWriter, r *http.Request) error {
	p, err := repoPath(r)
	if err != nil {
		return err
	}
	log, err := gitCall[[]wire.GitCommit](h, r, agentapi.GitLog, wire.GitLogRequest{Path: p})
	if err != nil {
		return err
	}
	type info struct {
		Hash      string `json:"hash"`
		Message   string `json:"message"`
		Author    string `json:"author"`
		Email     string `json:"email"`
		Timestamp string `json:"timestamp"`
	}
	out := []info{}
	for _, c := range log {
		out = append(out, info{c.Hash, c.Message, c.AuthorName, c.AuthorEmail, stamp(c.Time)})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) gitInit(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Path          string `json:"path"`
		Bare          bool   `json:"bare"`
		InitialBranch string `json:"initial_branch"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if _, err := gitCall[none](h, r, agentapi.GitInit, wire.GitInitRequest{Path: in.Path, Bare: in.Bare, InitialBranch: in.InitialBranch}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (h *Handler) gitDeleteBranch(w http.ResponseWriter, r *http.Request) error {
	var in wire.GitBranchRequest
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if _, err := gitCall[none](h, r, agentapi.GitDeleteBranch, in); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *Handler) gitListRemotes(w http.ResponseWriter, r *http.Request) error {
	p, err := repoPath(r)
	if err != nil {
		return err
	}
	remotes, err := gitCall[[]wire.GitRemote](h, r, agentapi.GitRemotes, wire.GitRepoRequest{Path: p})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"remotes": remotes})
	return nil
}

func (h *Handler) gitAddRemote(w http.ResponseWriter, r *http.Request) error {
	var in wire.GitAddRemoteRequest
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if _, err := gitCall[none](h, r, agentapi.GitAddRemote, in); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (h *Handler) gitReset(w http.ResponseWriter, r *http.Request) error {
	var in wire.GitResetRequest
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if _, err := gitCall[none](h, r, agentapi.GitReset, in); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (h *Handler) gitRestore(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		wire.GitRestoreRequest
		Source string `json:"source"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if in.Source != "" && in.Source != "HEAD" {
		return invalid(wire.CodeFeatureUnsupported, "restore from source %q is not supported on sbx: only from the index and HEAD", in.Source)
	}
	if _, err := gitCall[none](h, r, agentapi.GitRestore, in.GitRestoreRequest); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}
