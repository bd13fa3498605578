package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// EgressLog returns a sandbox's recent HTTP egress log, oldest first.
func (c *Client) EgressLog(ctx context.Context, idOrName string) ([]EgressLogEntry, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	var out []EgressLogEntry
	if err := c.call(ctx, request{method: http.MethodGet, path: sandboxPath(idOrName, "/egress/log")}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// FollowEgressLog calls fn with each of a sandbox's kept HTTP egress log
// entries, then with each new one as it happens, until ctx is done or fn
// returns an error (which it returns).
func (c *Client) FollowEgressLog(ctx context.Context, idOrName string, fn func(EgressLogEntry) error) error {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return err
	}
	resp, err := c.send(ctx, request{method: http.MethodGet, path: sandboxPath(idOrName, "/egress/log"), query: url.Values{"follow": {"true"}}})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var e EgressLogEntry
		if err := dec.Decode(&e); err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return ctxErr
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("decode egress log stream: %w", err)
		}
		if err := fn(e); err != nil {
			return err
		}
	}
}
