package mcp

import (
	"context"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sbxhq/sbx/sdk"
)

// Stdio serves MCP on stdin and stdout until the client goes away or ctx
// ends, acting with c (the command line's daemon and key).
func Stdio(ctx context.Context, c *sdk.Client) error {
	return New(func(*gomcp.RequestExtra) (*sdk.Client, error) { return c, nil }).Run(ctx, &gomcp.StdioTransport{})
}
