package mcp

import (
	"context"
	"fmt"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sbxhq/sbx/sdk"
	"github.com/sbxhq/sbx/wire"
)

// Target names the sandbox a tool acts on.
type Target struct {
	Sandbox string `json:"sandbox" jsonschema:"the sandbox's name or id"`
}

// createDescs describes wire.CreateSandboxRequest's fields for a model.
var createDescs = map[string]string{
	"name":               "a name to address it by (unique in your team); default none, address it by id",
	"image":              "the image to start from, e.g. python or debian; default the daemon's base image",
	"class":              "isolation: container (runc, the default) or gvisor (runsc; pause keeps memory)",
	"cpu":                "CPU cores (fractional allowed)",
	"memoryMiB":          "memory limit in MiB",
	"diskMiB":            "disk limit in MiB; writes beyond it fail with ENOSPC",
	"pidsLimit":          "most processes at once",
	"labels":             "key/value labels to find it by later (sandbox_list)",
	"env":                "environment variables of every command",
	"workdir":            "working directory of commands; default /workspace",
	"autoStopSeconds":    "idle policy: stop after this many idle seconds; 0 never",
	"autoPauseSeconds":   "idle policy: pause after this many idle seconds (exclusive with autoStopSeconds)",
	"autoArchiveSeconds": "archive after this many stopped seconds",
	"autoDeleteSeconds":  "delete after this many stopped seconds; -1 never",
	"ttlSeconds":         "delete this many seconds after creation; 0 none",
	"ephemeral":          "delete it when it stops",
	"keepAlive":          "never stop it for being idle",
	"network":            "bridge (default: own network, internet if allowed) or none (loopback only)",
	"egress":             "what it may connect to: {mode: allow-all|deny-all|allowlist, cidrs, domains}",
	"snapshot":           "start from this snapshot instead of an image",
	"pool":               "take a warm instance from this pool",
}

// GetOrCreateInput is sandbox_get_or_create's input: a name and, when it
// does not exist yet, how to create it.
type GetOrCreateInput struct {
	wire.CreateSandboxRequest
}

// ListInput filters sandbox_list.
type ListInput struct {
	State  string            `json:"state,omitempty" jsonschema:"only sandboxes in this state: started, stopped, paused, …"`
	Labels map[string]string `json:"labels,omitempty" jsonschema:"only sandboxes carrying all of these labels"`
}

// StopInput is sandbox_stop's input.
type StopInput struct {
	Target
	Force        bool `json:"force,omitempty" jsonschema:"kill at once instead of SIGTERM first"`
	GraceSeconds *int `json:"graceSeconds,omitempty" jsonschema:"seconds between SIGTERM and SIGKILL"`
}

// ForkInput is sandbox_fork's input.
type ForkInput struct {
	Target
	wire.ForkRequest
}

// SnapshotInput is sandbox_snapshot's input.
type SnapshotInput struct {
	Target
	wire.CreateSnapshotRequest
}

// ExposeInput is port_expose's input.
type ExposeInput struct {
	Target
	wire.ExposePortRequest
}

func (r registry) sandboxTools() {
	tool(r, "sandbox_create", "Create a sandbox and start it. Returns its id, name and state. A taken name is an error; use sandbox_get_or_create to keep one sandbox per task.",
		true, createDescs, func(ctx context.Context, c *sdk.Client, in wire.CreateSandboxRequest) (*gomcp.CallToolResult, error) {
			return jsonResult(c.CreateSandbox(ctx, in))
		})
	tool(r, "sandbox_get_or_create", "Return the sandbox of this name, creating it (with the other fields) if it does not exist, and starting or resuming it if it is stopped or paused. The way to keep one sandbox per conversation.",
		true, createDescs, func(ctx context.Context, c *sdk.Client, in GetOrCreateInput) (*gomcp.CallToolResult, error) {
			if in.Name == "" {
				return nil, errorf("name is required: it is what finds the sandbox again")
			}
			sb, created, err := c.EnsureSandbox(ctx, in.Name, in.CreateSandboxRequest)
			if err != nil {
				return nil, err
			}
			// Ready for every tool: reading files does not start a sandbox.
			switch sb.State {
			case wire.StateStopped:
				sb, err = c.StartSandbox(ctx, sb.ID)
			case wire.StatePaused:
				sb, err = c.ResumeSandbox(ctx, sb.ID)
			}
			if err != nil {
				return nil, err
			}
			return jsonResult(struct {
				*wire.Sandbox
				Created bool `json:"created"`
			}{sb, created}, nil)
		})
	tool(r, "sandbox_list", "List your sandboxes (id, name, state, image, labels).", false, nil,
		func(ctx context.Context, c *sdk.Client, in ListInput) (*gomcp.CallToolResult, error) {
			return jsonResult(c.ListSandboxes(ctx, sdk.ListOptions{State: in.State, Labels: in.Labels}))
		})
	tool(r, "sandbox_get", "Get one sandbox: state, limits, idle policy, timestamps.", false, nil,
		func(ctx context.Context, c *sdk.Client, in Target) (*gomcp.CallToolResult, error) {
			return jsonResult(c.GetSandbox(ctx, in.Sandbox))
		})
	tool(r, "sandbox_start", "Start a stopped sandbox; its files are kept.", true, nil,
		func(ctx context.Context, c *sdk.Client, in Target) (*gomcp.CallToolResult, error) {
			return jsonResult(c.StartSandbox(ctx, in.Sandbox))
		})
	tool(r, "sandbox_stop", "Stop a sandbox: its processes end, its files are kept.", true, nil,
		func(ctx context.Context, c *sdk.Client, in StopInput) (*gomcp.CallToolResult, error) {
			return jsonResult(c.StopSandbox(ctx, in.Sandbox, sdk.StopOptions{Force: in.Force, GraceSeconds: in.GraceSeconds}))
		})
	tool(r, "sandbox_delete", "Delete a sandbox and its files for good.", true, nil,
		func(ctx context.Context, c *sdk.Client, in Target) (*gomcp.CallToolResult, error) {
			if err := c.DeleteSandbox(ctx, in.Sandbox, true); err != nil {
				return nil, err
			}
			return text("deleted " + in.Sandbox), nil
		})
	tool(r, "sandbox_pause", "Pause a sandbox: its processes are frozen (class gvisor: saved to disk) until sandbox_resume.", true, nil,
		func(ctx context.Context, c *sdk.Client, in Target) (*gomcp.CallToolResult, error) {
			return jsonResult(c.PauseSandbox(ctx, in.Sandbox))
		})
	tool(r, "sandbox_resume", "Resume a paused sandbox where it left off.", true, nil,
		func(ctx context.Context, c *sdk.Client, in Target) (*gomcp.CallToolResult, error) {
			return jsonResult(c.ResumeSandbox(ctx, in.Sandbox))
		})
	tool(r, "sandbox_fork", "Copy a sandbox (files; class gvisor: running processes too) into count new sandboxes, to try alternatives in parallel.", true,
		map[string]string{"name": "name of the fork (count 1) or prefix of the forks' names", "count": "how many forks; default 1"},
		func(ctx context.Context, c *sdk.Client, in ForkInput) (*gomcp.CallToolResult, error) {
			return jsonResult(c.ForkSandbox(ctx, in.Sandbox, in.ForkRequest))
		})
	tool(r, "sandbox_snapshot", "Save a sandbox's filesystem (and memory, class gvisor) as a named snapshot that sandbox_create can start from.", true,
		map[string]string{"name": "the snapshot's name", "includeMemory": "save running processes too (class gvisor)", "expiresInSeconds": "delete the snapshot after this long; 0 never"},
		func(ctx context.Context, c *sdk.Client, in SnapshotInput) (*gomcp.CallToolResult, error) {
			return jsonResult(c.CreateSnapshot(ctx, in.Sandbox, in.CreateSnapshotRequest))
		})
	tool(r, "port_expose", "Expose a port of the sandbox as a preview URL (a server must listen on 0.0.0.0 or 127.0.0.1 inside). Returns the URL; unless public, it carries a token.", true,
		map[string]string{"port": "the port inside the sandbox", "public": "reachable without a key or token"},
		func(ctx context.Context, c *sdk.Client, in ExposeInput) (*gomcp.CallToolResult, error) {
			return jsonResult(c.ExposePort(ctx, in.Sandbox, in.ExposePortRequest))
		})
}

// errorf is a tool error of this server (a bad argument).
func errorf(format string, args ...any) error {
	return &sdk.APIError{Code: wire.CodeInvalidParameter, Message: fmt.Sprintf(format, args...)}
}
