package mcp

import (
	"context"
	"fmt"
	"strings"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sbxhq/sbx/sdk"
	"github.com/sbxhq/sbx/wire"
)

// CloneInput is git_clone's input.
type CloneInput struct {
	Target
	wire.GitCloneRequest
}

// RepoInput names a repository in a sandbox.
type RepoInput struct {
	Target
	Path string `json:"path" jsonschema:"the repository's directory inside the sandbox"`
}

// DiffInput is git_diff's input.
type DiffInput struct {
	RepoInput
	Staged   bool `json:"staged,omitempty" jsonschema:"show staged changes instead of unstaged ones"`
	MaxBytes int  `json:"maxBytes,omitempty" jsonschema:"byte budget; default 20000"`
}

// CommitInput is git_commit's input.
type CommitInput struct {
	Target
	wire.GitCommitRequest
	AddAll bool `json:"addAll,omitempty" jsonschema:"stage every change first, new files and removals too (git add -A)"`
}

func (r registry) gitTools() {
	tool(r, "git_clone", "Clone a git repository into a sandbox (https://, http:// or file://; credentials are used once unless storeCredentials).", true,
		map[string]string{"url": "the repository's URL", "path": "where to clone to; default the repository's name in the workdir",
			"branch": "branch to check out", "depth": "shallow clone of this many commits", "commit": "check out this commit after cloning",
			"username": "for a private repository", "token": "password or access token"},
		func(ctx context.Context, c *sdk.Client, in CloneInput) (*gomcp.CallToolResult, error) {
			return jsonResult(c.GitClone(ctx, in.Sandbox, in.GitCloneRequest))
		})
	tool(r, "git_status", "Show a repository's branch, head commit and changed, staged and untracked files.", false, nil,
		func(ctx context.Context, c *sdk.Client, in RepoInput) (*gomcp.CallToolResult, error) {
			return jsonResult(c.GitStatus(ctx, in.Sandbox, in.Path))
		})
	tool(r, "git_diff", "Show a repository's changes as a unified diff. Runs the git program of the sandbox's image: an image without git gets an error saying so (git_status lists the changed files without it).", false, nil,
		func(ctx context.Context, c *sdk.Client, in DiffInput) (*gomcp.CallToolResult, error) {
			args := []string{"git", "-C", in.Path, "diff"}
			if in.Staged {
				args = append(args, "--staged")
			}
			res, err := c.Exec(ctx, in.Sandbox, wire.ExecRequest{Cmd: args})
			if hasCode(err, wire.CodeCommandNotFound) {
				return nil, &sdk.APIError{Code: wire.CodeCommandNotFound, Message: "git_diff needs the git program in the sandbox's image, and this one has none; git_status lists the changed files without it, or use an image with git"}
			}
			if err != nil {
				return nil, err
			}
			if res.ExitCode != 0 {
				return nil, errorf("git diff failed (exit %d): %s", res.ExitCode, strings.TrimSpace(res.Stderr))
			}
			max := budget(in.MaxBytes)
			kept, left := cut(res.Stdout, max)
			if kept == "" {
				kept = "no changes"
			}
			if left > 0 {
				kept += fmt.Sprintf("\n[truncated at maxBytes %d: %d more bytes; diff one file at a time with a command]", max, left)
			}
			return text(kept), nil
		})
	tool(r, "git_commit", "Commit the staged changes of a repository (addAll stages everything first). Returns the commit.", true,
		map[string]string{"path": "the repository's directory", "message": "the commit message", "authorName": "author; default the repository's config",
			"authorEmail": "author's email", "allowEmpty": "commit even with nothing staged", "all": "stage changes of tracked files first (git commit -a)"},
		func(ctx context.Context, c *sdk.Client, in CommitInput) (*gomcp.CallToolResult, error) {
			if in.AddAll {
				if _, err := c.GitAdd(ctx, in.Sandbox, wire.GitAddRequest{Path: in.Path, Files: []string{"."}}); err != nil {
					return nil, err
				}
			}
			return jsonResult(c.GitCommit(ctx, in.Sandbox, in.GitCommitRequest))
		})
}
