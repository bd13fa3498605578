package main

import (
	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/internal/mcp"
)

func newMCPCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve sbx's tools to an AI agent over MCP (stdio)",
		Long: `Serve the Model Context Protocol on stdin and stdout, as a client of the
daemon at --host with --token (or SBX_HOST and SBX_TOKEN): an MCP client
(Claude Desktop, Claude Code, Cursor, …) runs it with the config
  {"command": "sbx", "args": ["mcp"], "env": {"SBX_HOST": "…", "SBX_TOKEN": "…"}}
The daemon serves the same tools over Streamable HTTP at /mcp, with an API
key as the bearer token; only sbx mcp, which runs on the client's machine,
adds file_upload and file_download between that machine and a sandbox.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			return mcp.Stdio(cmd.Context(), c)
		},
	}
}
