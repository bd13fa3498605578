package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"unicode/utf8"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sbxhq/sbx/sdk"
	"github.com/sbxhq/sbx/wire"
)

// maxResourceBytes bounds a resource read; file_read pages through more.
const maxResourceBytes = 1 << 20

func (r registry) resources() {
	r.s.AddResourceTemplate(&gomcp.ResourceTemplate{
		Name: "sandbox-file", Title: "A file of a sandbox", URITemplate: "sbx://{sandbox}/{+path}",
		Description: "sbx://<sandbox>/<path>: the file at /<path> inside the sandbox (the first MiB; file_read pages through more).",
	}, r.readFile)
	r.s.AddResourceTemplate(&gomcp.ResourceTemplate{
		Name: "sandbox-logs", Title: "A sandbox's main process output", URITemplate: "sbx-logs://{sandbox}", MIMEType: "text/plain",
		Description: "The output of the sandbox's main process (its entrypoint), stdout and stderr together; the last MiB.",
	}, r.readLogs)
	r.s.AddResourceTemplate(&gomcp.ResourceTemplate{
		Name: "sandbox-events", Title: "A sandbox's state changes", URITemplate: "sbx-events://{sandbox}", MIMEType: "application/json",
		Description: "The sandbox's recorded state changes (created, started, stopped, paused, …), oldest first.",
	}, r.readEvents)
}

// resourceClient is the request's client and the URI's sandbox.
func (r registry) resourceClient(req *gomcp.ReadResourceRequest) (*sdk.Client, *url.URL, error) {
	u, err := url.Parse(req.Params.URI)
	if err != nil || u.Host == "" {
		return nil, nil, gomcp.ResourceNotFoundError(req.Params.URI)
	}
	c, err := r.clients(req.Extra)
	return c, u, err
}

func (r registry) readFile(ctx context.Context, req *gomcp.ReadResourceRequest) (*gomcp.ReadResourceResult, error) {
	c, u, err := r.resourceClient(req)
	if err != nil {
		return nil, err
	}
	body, err := c.Download(ctx, u.Host, u.Path)
	if err != nil {
		return nil, resourceError(req.Params.URI, err)
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, maxResourceBytes))
	if err != nil {
		return nil, err
	}
	rc := &gomcp.ResourceContents{URI: req.Params.URI}
	if utf8.Valid(b) {
		rc.MIMEType, rc.Text = "text/plain", string(b)
	} else {
		rc.MIMEType, rc.Blob = "application/octet-stream", b
	}
	return &gomcp.ReadResourceResult{Contents: []*gomcp.ResourceContents{rc}}, nil
}

func (r registry) readLogs(ctx context.Context, req *gomcp.ReadResourceRequest) (*gomcp.ReadResourceResult, error) {
	c, u, err := r.resourceClient(req)
	if err != nil {
		return nil, err
	}
	var out tail
	if err := c.MainLogs(ctx, u.Host, false, &out); err != nil {
		return nil, resourceError(req.Params.URI, err)
	}
	text := out.b.String()
	if out.dropped > 0 {
		text = fmt.Sprintf("[the first %d bytes are left out]\n", out.dropped) + text
	}
	return &gomcp.ReadResourceResult{Contents: []*gomcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: text}}}, nil
}

func (r registry) readEvents(ctx context.Context, req *gomcp.ReadResourceRequest) (*gomcp.ReadResourceResult, error) {
	c, u, err := r.resourceClient(req)
	if err != nil {
		return nil, err
	}
	evs, err := c.ListEvents(ctx, u.Host, sdk.EventOptions{})
	if err != nil {
		return nil, resourceError(req.Params.URI, err)
	}
	b, err := json.MarshalIndent(evs, "", "  ")
	if err != nil {
		return nil, err
	}
	return &gomcp.ReadResourceResult{Contents: []*gomcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}}, nil
}

// resourceError is a missing sandbox or file as MCP's resource-not-found
// error, anything else with sbx's code.
func resourceError(uri string, err error) error {
	if hasCode(err, wire.CodeSandboxNotFound) || hasCode(err, wire.CodeFileNotFound) {
		return gomcp.ResourceNotFoundError(uri)
	}
	return toolError(err)
}

// tail keeps the last maxResourceBytes written to it.
type tail struct {
	b       bytes.Buffer
	dropped int64
}

func (t *tail) Write(p []byte) (int, error) {
	t.b.Write(p)
	if over := t.b.Len() - maxResourceBytes; over > 0 {
		t.b.Next(over)
		t.dropped += int64(over)
	}
	return len(p), nil
}
