package sdk

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// PauseSandbox pauses a started sandbox: class gvisor saves every process
// and its memory to disk and frees the host's CPU and RAM; class container
// freezes every process in place.
func (c *Client) PauseSandbox(ctx context.Context, idOrName string) (*Sandbox, error) {
	return c.sandboxCall(ctx, http.MethodPost, idOrName, "/pause", nil)
}

// ResumeSandbox resumes a paused sandbox; every process goes on where it was.
func (c *Client) ResumeSandbox(ctx context.Context, idOrName string) (*Sandbox, error) {
	return c.sandboxCall(ctx, http.MethodPost, idOrName, "/resume", nil)
}

// CreateSnapshot saves a sandbox as the snapshot req.Name.
func (c *Client) CreateSnapshot(ctx context.Context, idOrName string, req CreateSnapshotRequest) (*Snapshot, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	var out Snapshot
	if err := c.call(ctx, request{method: http.MethodPost, path: sandboxPath(idOrName, "/snapshots"), in: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListSnapshots returns every snapshot, oldest first.
func (c *Client) ListSnapshots(ctx context.Context) ([]Snapshot, error) {
	var out []Snapshot
	if err := c.call(ctx, request{method: http.MethodGet, path: "/v1/snapshots"}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// GetSnapshot returns the snapshot called name.
func (c *Client) GetSnapshot(ctx context.Context, name string) (*Snapshot, error) {
	if err := checkName("snapshot name", name); err != nil {
		return nil, err
	}
	var out Snapshot
	if err := c.call(ctx, request{method: http.MethodGet, path: "/v1/snapshots/" + url.PathEscape(name)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteSnapshot deletes a snapshot. Sandboxes made from it keep working.
func (c *Client) DeleteSnapshot(ctx context.Context, name string) error {
	if err := checkName("snapshot name", name); err != nil {
		return err
	}
	return c.call(ctx, request{method: http.MethodDelete, path: "/v1/snapshots/" + url.PathEscape(name)}, nil)
}

// ForkSandbox makes req.Count independent copies of a sandbox.
func (c *Client) ForkSandbox(ctx context.Context, idOrName string, req ForkRequest) (*ForkResult, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	var out ForkResult
	if err := c.call(ctx, request{method: http.MethodPost, path: sandboxPath(idOrName, "/fork"), in: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListForks returns the sandboxes forked from a sandbox (its children).
func (c *Client) ListForks(ctx context.Context, idOrName string) ([]Sandbox, error) {
	return c.sandboxList(ctx, idOrName, "/forks")
}

// ListAncestors returns a fork's parent, its parent's parent and so on.
func (c *Client) ListAncestors(ctx context.Context, idOrName string) ([]Sandbox, error) {
	return c.sandboxList(ctx, idOrName, "/ancestors")
}

// GetParent returns the sandbox a fork was made from; a sandbox that is no
// fork gives a not-found error.
func (c *Client) GetParent(ctx context.Context, idOrName string) (*Sandbox, error) {
	return c.sandboxCall(ctx, http.MethodGet, idOrName, "/parent", nil)
}

// DeleteSandboxCascade deletes a sandbox together with its forks, their
// forks and so on. DeleteSandbox refuses a sandbox that has forks.
func (c *Client) DeleteSandboxCascade(ctx context.Context, idOrName string, wait bool) error {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return err
	}
	q := url.Values{"wait": {strconv.FormatBool(wait)}, "cascade": {"true"}}
	return c.call(ctx, request{method: http.MethodDelete, path: sandboxPath(idOrName, ""), query: q}, nil)
}

func (c *Client) sandboxList(ctx context.Context, idOrName, suffix string) ([]Sandbox, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	var out []Sandbox
	if err := c.call(ctx, request{method: http.MethodGet, path: sandboxPath(idOrName, suffix)}, &out); err != nil {
		return nil, err
	}
	return out, nil
}
