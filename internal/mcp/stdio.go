package mcp

import (
	"context"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sbxhq/sbx/sdk"
)

// Stdio serves MCP on stdin and stdout until the client goes away or ctx
// ends, acting with c (the command line's daemon and key). It runs on the
// client's machine, so it also copies files between it and a sandbox.
func Stdio(ctx context.Context, c *sdk.Client) error {
	srv := New(func(*gomcp.RequestExtra) (*sdk.Client, error) { return c, nil }, Options{Local: true})
	return srv.Run(ctx, &gomcp.StdioTransport{})
}
