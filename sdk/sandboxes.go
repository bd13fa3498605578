package sdk

import (
	"context"
	"net/http"
	"net/url"
	"sort"
	"strconv"
)

// ListOptions filters ListSandboxes. The zero value lists every sandbox.
type ListOptions struct {
	State  string            // only sandboxes in this state
	Labels map[string]string // only sandboxes carrying all of these labels
}

// StopOptions tunes StopSandbox. The zero value uses the daemon's grace period.
type StopOptions struct {
	GraceSeconds *int // time between SIGTERM and SIGKILL; nil for the default
	Force        bool // kill at once
}

// CreateSandbox creates a sandbox and returns it. A name that is taken gives
// a conflict error; use EnsureSandbox for get-or-create.
func (c *Client) CreateSandbox(ctx context.Context, req CreateSandboxRequest) (*Sandbox, error) {
	var sb Sandbox
	err := c.call(ctx, request{method: http.MethodPost, path: "/v1/sandboxes", in: req}, &sb)
	if err != nil {
		return nil, err
	}
	return &sb, nil
}

// EnsureSandbox returns the sandbox called name, creating it from req when it
// does not exist; created says which happened. req.Name is ignored.
func (c *Client) EnsureSandbox(ctx context.Context, name string, req CreateSandboxRequest) (sb *Sandbox, created bool, err error) {
	if err := checkName("sandbox name", name); err != nil {
		return nil, false, err
	}
	req.Name = name
	resp, err := c.send(ctx, request{method: http.MethodPut, path: sandboxPath(name, ""), in: req})
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	sb = new(Sandbox)
	if err := decodeJSON(resp, sb); err != nil {
		return nil, false, err
	}
	return sb, resp.StatusCode == http.StatusCreated, nil
}

// GetSandbox returns the sandbox with this id or name.
func (c *Client) GetSandbox(ctx context.Context, idOrName string) (*Sandbox, error) {
	return c.sandboxCall(ctx, http.MethodGet, idOrName, "", nil)
}

// ListSandboxes returns the sandboxes that match opts.
func (c *Client) ListSandboxes(ctx context.Context, opts ListOptions) ([]Sandbox, error) {
	q := url.Values{}
	if opts.State != "" {
		q.Set("state", opts.State)
	}
	keys := make([]string, 0, len(opts.Labels))
	for k := range opts.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys) // a stable URL is easier to read in logs
	for _, k := range keys {
		q.Add("label", k+"="+opts.Labels[k])
	}
	var out []Sandbox
	if err := c.call(ctx, request{method: http.MethodGet, path: "/v1/sandboxes", query: q}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteSandbox deletes a sandbox and everything it owns. With wait it returns
// once the sandbox is gone; without, once deletion has begun.
func (c *Client) DeleteSandbox(ctx context.Context, idOrName string, wait bool) error {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return err
	}
	q := url.Values{"wait": {strconv.FormatBool(wait)}}
	return c.call(ctx, request{method: http.MethodDelete, path: sandboxPath(idOrName, ""), query: q}, nil)
}

// StartSandbox starts a stopped sandbox and returns it once started.
func (c *Client) StartSandbox(ctx context.Context, idOrName string) (*Sandbox, error) {
	return c.sandboxCall(ctx, http.MethodPost, idOrName, "/start", nil)
}

// StopSandbox stops a sandbox's instance; its filesystem is kept.
func (c *Client) StopSandbox(ctx context.Context, idOrName string, opts StopOptions) (*Sandbox, error) {
	q := url.Values{}
	if opts.GraceSeconds != nil {
		q.Set("graceSeconds", strconv.Itoa(*opts.GraceSeconds))
	}
	if opts.Force {
		q.Set("force", "true")
	}
	return c.sandboxCall(ctx, http.MethodPost, idOrName, "/stop", q)
}

func (c *Client) sandboxCall(ctx context.Context, method, idOrName, suffix string, q url.Values) (*Sandbox, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	var sb Sandbox
	if err := c.call(ctx, request{method: method, path: sandboxPath(idOrName, suffix), query: q}, &sb); err != nil {
		return nil, err
	}
	return &sb, nil
}
