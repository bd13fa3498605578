// Package mcp is sbx's Model Context Protocol server: tools, resources and
// their schemas, written once over the Go client (package sdk) so that both
// transports serve the same thing. `sbx mcp` serves it over stdio as a
// client of a daemon (Stdio); `sbx serve` serves it over Streamable HTTP at
// /mcp (Handler), where every tool call is a request to the daemon's own
// API handler with the caller's key, so it passes the same gate.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sbxhq/sbx/internal/version"
	"github.com/sbxhq/sbx/sdk"
	"github.com/sbxhq/sbx/wire"
)

// DefaultMaxBytes is the byte budget of a text output when a call names
// none: Claude Code refuses tool results over 25,000 tokens.
const DefaultMaxBytes = 20000

// Clients gives a request the sbx client to act with: over stdio the one
// client of the command line, over HTTP one that carries the caller's key.
type Clients func(extra *gomcp.RequestExtra) (*sdk.Client, error)

// Options are what differs between the transports.
type Options struct {
	// Local adds the tools that copy files between the machine the server
	// runs on and a sandbox: for `sbx mcp`, run by the client on its own
	// machine; never for the daemon, whose files are not the caller's.
	Local bool
}

// New returns the MCP server with every tool and resource of sbx.
func New(clients Clients, opts Options) *gomcp.Server {
	s := gomcp.NewServer(&gomcp.Implementation{Name: "sbx", Title: "sbx sandboxes", Version: version.Version}, &gomcp.ServerOptions{
		Instructions: instructions,
	})
	r := registry{s: s, clients: clients}
	r.sandboxTools()
	r.commandTools()
	r.codeTools()
	r.fileTools()
	if opts.Local {
		r.localFileTools()
	}
	r.gitTools()
	r.desktopTools()
	r.resources()
	return s
}

const instructions = `sbx runs isolated Linux sandboxes. Keep one sandbox per task by name
(sandbox_get_or_create), then run commands (command_run; process_start and
process_output for anything longer than about 50 seconds), read and edit
files (file_*), and use git (git_*). Every text output is cut at maxBytes
(default 20000) with a note saying where to continue. Errors carry sbx's
error code (SANDBOX_NOT_FOUND, MISSING_SCOPE, …).`

type registry struct {
	s       *gomcp.Server
	clients Clients
}

// tool registers a tool whose handler acts with the request's client;
// errors become tool errors carrying sbx's code (toolError). descs
// describes the input's fields by JSON name, for types from package sdk
// that carry no jsonschema tags.
func tool[In any](r registry, name, desc string, write bool, descs map[string]string, fn func(ctx context.Context, c *sdk.Client, in In) (*gomcp.CallToolResult, error)) {
	t := &gomcp.Tool{Name: name, Description: desc, InputSchema: inputSchema[In](descs)}
	t.Annotations = &gomcp.ToolAnnotations{ReadOnlyHint: !write}
	if write {
		t.Annotations.DestructiveHint = ptr(true)
	}
	gomcp.AddTool(r.s, t, func(ctx context.Context, req *gomcp.CallToolRequest, in In) (*gomcp.CallToolResult, any, error) {
		c, err := r.clients(req.Extra)
		if err != nil {
			return nil, nil, err
		}
		if tok := req.Params.GetProgressToken(); tok != nil {
			defer reportProgress(ctx, req.Session, tok, name)()
		}
		res, err := fn(ctx, c, in)
		if err != nil {
			return nil, nil, toolError(err)
		}
		return res, nil, nil
	})
}

func ptr[T any](v T) *T { return &v }

// progressEvery is how often a call that asked for progress hears that its
// tool still works.
var progressEvery = 2 * time.Second

// reportProgress sends progress notifications for token every
// progressEvery until the returned stop is called: long work (a pull, a
// fork, a restore, a wait) tells the client it is alive, so a client that
// resets its timeout on progress does not give up. The daemon's API
// reports no fractions, so the progress is the seconds elapsed and the
// total unknown.
func reportProgress(ctx context.Context, ss *gomcp.ServerSession, token any, name string) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		start := time.Now()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				secs := time.Since(start).Seconds()
				ss.NotifyProgress(ctx, &gomcp.ProgressNotificationParams{ProgressToken: token, Progress: secs,
					Message: fmt.Sprintf("%s: still working after %.0f s", name, secs)})
			}
		}
	}()
	return func() { cancel(); <-done }
}

// inputSchema infers In's schema and adds descs to its properties (a name
// descs gives that In lacks is a mistake of this package: it panics).
func inputSchema[In any](descs map[string]string) *jsonschema.Schema {
	s, err := jsonschema.ForType(reflect.TypeFor[In](), &jsonschema.ForOptions{})
	if err != nil {
		panic(err)
	}
	for name, d := range descs {
		p, ok := s.Properties[name]
		if !ok {
			panic(fmt.Sprintf("mcp: %T has no field %q", *new(In), name))
		}
		p.Description = d
	}
	return s
}

// toolError is err as an agent can act on it: sbx's code, the HTTP status
// and the daemon's message.
func toolError(err error) error {
	var api *sdk.APIError
	if errors.As(err, &api) {
		if api.StatusCode != 0 {
			return fmt.Errorf("%s (HTTP %d): %s", api.Code, api.StatusCode, api.Message)
		}
		return fmt.Errorf("%s: %s", api.Code, api.Message)
	}
	return err
}

// hasCode reports whether err is the daemon's refusal with code.
func hasCode(err error, code wire.Code) bool {
	var api *sdk.APIError
	return errors.As(err, &api) && api.Code == code
}

// text is a result of one text block.
func text(s string) *gomcp.CallToolResult {
	return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: s}}}
}

// jsonResult is v as indented JSON within the default budget, or err.
func jsonResult[T any](v T, err error) (*gomcp.CallToolResult, error) {
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	out, left := cut(string(b), DefaultMaxBytes)
	if left > 0 {
		out += fmt.Sprintf("\n[truncated: %d more bytes of JSON; narrow the request (a filter, a path, a depth)]", left)
	}
	return text(out), nil
}

// budget is the byte budget a call asked for, or the default.
func budget(maxBytes int) int {
	if maxBytes <= 0 {
		return DefaultMaxBytes
	}
	return maxBytes
}

// cut cuts s to maxBytes without splitting a UTF-8 sequence and returns
// what it kept and how many bytes it left out.
func cut(s string, maxBytes int) (string, int) {
	if len(s) <= maxBytes {
		return s, 0
	}
	n := maxBytes
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n], len(s) - n
}

// clip is cut with the note for a paged output: s starts at byte offset of
// the whole; the note says what was left out and the offset to read on from.
func clip(s string, offset int64, maxBytes int) (string, string) {
	kept, left := cut(s, maxBytes)
	if left == 0 {
		return s, ""
	}
	return kept, fmt.Sprintf("\n[truncated at maxBytes %d: %d more bytes; continue with offset %d]", maxBytes, left, offset+int64(len(kept)))
}
