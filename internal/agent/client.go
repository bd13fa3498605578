package agent

import "github.com/sbxhq/sbx/internal/agentapi"

// Client is the daemon's view of one agent. It lives in agentapi, the
// contract both sides share; these names keep the daemon's callers as they
// were.
type Client = agentapi.Client

// NewClient returns a client for the agent whose socket is in runDir.
func NewClient(runDir string) *Client { return agentapi.NewClient(runDir) }
