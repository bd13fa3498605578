package sdk

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Snapshot is a saved sandbox new sandboxes start from: its filesystem, and
// for class gvisor optionally its memory (every process, running).
type Snapshot struct {
	// The snapshot's name, unique in the team; a create's snapshot field names it.
	Name    string `json:"name"`
	Sandbox string `json:"sandbox"` // id of the sandbox it was taken from
	// The class of the sandbox it was taken from; sandboxes made from it have the same.
	Class     string `json:"class"`
	Image     string `json:"image"`     // the image under the snapshot's own layer
	Memory    bool   `json:"memory"`    // sandboxes made from it start with its processes running
	SizeBytes int64  `json:"sizeBytes"` // its own layer plus the memory image
	// When it was taken.
	CreatedAt time.Time `json:"createdAt"`
	// ExpiresInSeconds is how long it lives unused: each sandbox created from
	// it moves ExpiresAt to then plus this. 0: never expires.
	ExpiresInSeconds int `json:"expiresInSeconds"`
	// When it is deleted unless used first; absent: never.
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
}

// CreateSnapshotRequest is the body of POST /v1/sandboxes/{id}/snapshots.
type CreateSnapshotRequest struct {
	// The snapshot's name: 1 to 63 of a-z, 0-9, '.', '_' and '-'.
	Name string `json:"name"`
	// IncludeMemory saves every process and its memory too (class gvisor,
	// started or paused sandboxes). A started sandbox is paused for the
	// save and resumed after it.
	IncludeMemory    bool `json:"includeMemory,omitempty"`
	ExpiresInSeconds int  `json:"expiresInSeconds,omitempty"` // 0: never
}

// ForkRequest is the body of POST /v1/sandboxes/{id}/fork.
type ForkRequest struct {
	// Name of the fork; with Count > 1 the forks are Name-1 … Name-N. Empty:
	// unnamed forks.
	Name  string `json:"name,omitempty"`
	Count int    `json:"count,omitempty"` // how many forks to make. Default: 1.
}

// ForkResult is the answer of a fork.
type ForkResult struct {
	// The new sandboxes, started.
	Forks  []Sandbox `json:"forks"`
	Memory bool      `json:"memory"` // the forks' processes were copied running (class gvisor)
	// Why the processes were not copied, when memory is false.
	Note string `json:"note,omitempty"`
}

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
