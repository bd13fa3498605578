package daemon

import (
	"github.com/sbxhq/sbx/internal/api"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/mcp"
)

// mountMCP serves MCP over Streamable HTTP at /mcp (internal/mcp): the
// bearer key goes through the gate, and every tool call is a request to
// the API handler h with that key.
func mountMCP(h *api.Server, gate *authz.Gate) {
	h.Mount(mcp.Path, mcp.Handler(gate, h))
}
