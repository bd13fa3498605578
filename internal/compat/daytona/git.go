package daytona

import (
	"net/http"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/sdk"
)

// git: Daytona's toolbox git routes onto the agent's git (go-git, so it
// works in any image, no git binary needed). Not served: init, reset,
// restore, remotes, config, credentials and branch deletion, which the
// agent does not have.

// gitStatusNames are Daytona's names of sbx's file states.
var gitStatusNames = map[string]string{
	"unmodified": "Unmodified", "untracked": "Untracked", "modified": "Modified", "added": "Added",
	"deleted": "Deleted", "renamed": "Renamed", "copied": "Copied", "unmerged": "Updated but unmerged",
}

func (h *Handler) gitCall(w http.ResponseWriter, r *http.Request, route agentapi.Route, in, out any) error {
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	return call(r.Context(), c, route, route.Path, nil, in, out)
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
		return invalid(sdk.CodeInvalidParameter, "url is required")
	case in.CommitID != "":
		return invalid(sdk.CodeFeatureUnsupported, "cloning at a commit (commitId) is not supported on sbx: clone, then check out a branch")
	case in.InsecureSkipTLS:
		return invalid(sdk.CodeFeatureUnsupported, "insecureSkipTls is not supported on sbx")
	}
	req := sdk.GitCloneRequest{URL: in.URL, Path: in.Path, Branch: in.Branch, Depth: in.Depth, Username: in.Username, Token: in.Password}
	if err := h.gitCall(w, r, agentapi.GitClone, req, nil); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func repoPath(r *http.Request) (string, error) {
	p := r.URL.Query().Get("path")
	if p == "" {
		return "", invalid(sdk.CodeInvalidPath, "path is required: the repository's directory")
	}
	return p, nil
}

func (h *Handler) gitStatus(w http.ResponseWriter, r *http.Request) error {
	p, err := repoPath(r)
	if err != nil {
		return err
	}
	var st sdk.GitStatus
	if err := h.gitCall(w, r, agentapi.GitStatus, sdk.GitRepoRequest{Path: p}, &st); err != nil {
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
		"fileStatus": files, "ahead": 0, "behind": 0, "branchPublished": false})
	return nil
}

func (h *Handler) gitBranches(w http.ResponseWriter, r *http.Request) error {
	p, err := repoPath(r)
	if err != nil {
		return err
	}
	var b sdk.GitBranches
	if err := h.gitCall(w, r, agentapi.GitBranches, sdk.GitRepoRequest{Path: p}, &b); err != nil {
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
		return invalid(sdk.CodeInvalidParameter, "path and name are required")
	}
	var st sdk.GitStatus
	if err := h.gitCall(w, r, agentapi.GitStatus, sdk.GitRepoRequest{Path: in.Path}, &st); err != nil {
		return err
	}
	if st.Branch == "" {
		return invalid(sdk.CodeFeatureUnsupported, "creating a branch while HEAD is detached is not supported on sbx")
	}
	if err := h.gitCall(w, r, agentapi.GitCheckout, sdk.GitCheckoutRequest{Path: in.Path, Branch: in.Name, Create: true}, nil); err != nil {
		return err
	}
	if err := h.gitCall(w, r, agentapi.GitCheckout, sdk.GitCheckoutRequest{Path: in.Path, Branch: st.Branch}, nil); err != nil {
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
	if err := h.gitCall(w, r, agentapi.GitCheckout, sdk.GitCheckoutRequest{Path: in.Path, Branch: in.Branch}, nil); err != nil {
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
	if err := h.gitCall(w, r, agentapi.GitAdd, sdk.GitAddRequest{Path: in.Path, Files: in.Files}, nil); err != nil {
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
	var c sdk.GitCommit
	req := sdk.GitCommitRequest{Path: in.Path, Message: in.Message, AuthorName: in.Author, AuthorEmail: in.Email, AllowEmpty: in.AllowEmpty}
	if err := h.gitCall(w, r, agentapi.GitCommit, req, &c); err != nil {
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

func (in gitSyncIn) request() sdk.GitSyncRequest {
	return sdk.GitSyncRequest{Path: in.Path, Remote: in.Remote, Branch: in.Branch, Username: in.Username, Token: in.Password}
}

func (h *Handler) gitPush(w http.ResponseWriter, r *http.Request) error {
	var in gitSyncIn
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if err := h.gitCall(w, r, agentapi.GitPush, in.request(), nil); err != nil {
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
	if err := h.gitCall(w, r, agentapi.GitPull, in.request(), nil); err != nil {
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
	var log []sdk.GitCommit
	if err := h.gitCall(w, r, agentapi.GitLog, sdk.GitLogRequest{Path: p}, &log); err != nil {
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
