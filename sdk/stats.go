package sdk

import (
	"context"
	"net/http"
)

// Stats returns what a sandbox uses now: CPU, memory, pids, disk and network.
// It never starts a stopped sandbox (which reads as zeros) and does not count
// as activity.
func (c *Client) Stats(ctx context.Context, idOrName string) (*SandboxStats, error) {
	var out SandboxStats
	if err := c.call(ctx, request{method: http.MethodGet, path: sandboxPath(idOrName, "/stats")}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
