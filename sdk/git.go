package sdk

import (
	"context"
	"net/http"
)

// git in the toolbox: the sandbox's agent runs git itself (go-git), so these
// work in any image, with or without a git program. Every request names the
// repository by Path: absolute, or relative to the sandbox's working
// directory. Credentials (Username, Token) travel with the one call that
// needs them and are not written into the sandbox unless a clone asks
// (StoreCredentials). A server that refuses them answers GIT_AUTH_FAILED.

// GitClone clones a repository into the sandbox.
func (c *Client) GitClone(ctx context.Context, idOrName string, req GitCloneRequest) (*GitStatus, error) {
	var out GitStatus
	return &out, c.gitCall(ctx, idOrName, "clone", req, &out)
}

// GitStatus describes a repository's branch, HEAD and changed files.
func (c *Client) GitStatus(ctx context.Context, idOrName, path string) (*GitStatus, error) {
	var out GitStatus
	return &out, c.gitCall(ctx, idOrName, "status", GitRepoRequest{Path: path}, &out)
}

// GitBranches lists a repository's local and remote branches.
func (c *Client) GitBranches(ctx context.Context, idOrName, path string) (*GitBranches, error) {
	var out GitBranches
	return &out, c.gitCall(ctx, idOrName, "branches", GitRepoRequest{Path: path}, &out)
}

// GitCheckout switches to a branch, making it first with Create.
func (c *Client) GitCheckout(ctx context.Context, idOrName string, req GitCheckoutRequest) (*GitStatus, error) {
	var out GitStatus
	return &out, c.gitCall(ctx, idOrName, "checkout", req, &out)
}

// GitAdd stages files.
func (c *Client) GitAdd(ctx context.Context, idOrName string, req GitAddRequest) (*GitStatus, error) {
	var out GitStatus
	return &out, c.gitCall(ctx, idOrName, "add", req, &out)
}

// GitCommit commits what is staged.
func (c *Client) GitCommit(ctx context.Context, idOrName string, req GitCommitRequest) (*GitCommit, error) {
	var out GitCommit
	return &out, c.gitCall(ctx, idOrName, "commit", req, &out)
}

// GitPush pushes a branch to a remote.
func (c *Client) GitPush(ctx context.Context, idOrName string, req GitSyncRequest) (*GitSyncResult, error) {
	var out GitSyncResult
	return &out, c.gitCall(ctx, idOrName, "push", req, &out)
}

// GitPull fetches a branch and fast-forwards the current one to it; a pull
// that needs a merge answers 409 GIT_CONFLICT.
func (c *Client) GitPull(ctx context.Context, idOrName string, req GitSyncRequest) (*GitSyncResult, error) {
	var out GitSyncResult
	return &out, c.gitCall(ctx, idOrName, "pull", req, &out)
}

// GitLog lists the commits reachable from HEAD, newest first.
func (c *Client) GitLog(ctx context.Context, idOrName string, req GitLogRequest) ([]GitCommit, error) {
	var out []GitCommit
	err := c.gitCall(ctx, idOrName, "log", req, &out)
	return out, err
}

func (c *Client) gitCall(ctx context.Context, idOrName, op string, in, out any) error {
	if err := checkName("sandbox", idOrName); err != nil {
		return err
	}
	return c.call(ctx, request{method: http.MethodPost, path: sandboxPath(idOrName, "/git/"+op), in: in}, out)
}
