package sdk

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// CreateKey makes an API key; the answer's Key is its secret, shown once.
func (c *Client) CreateKey(ctx context.Context, req CreateKeyRequest) (*CreatedKey, error) {
	var out CreatedKey
	if err := c.call(ctx, request{method: http.MethodPost, path: "/v1/keys", in: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListKeys lists API keys (never their secrets); team "" lists every team's
// the caller may see.
func (c *Client) ListKeys(ctx context.Context, team string) ([]APIKey, error) {
	var out []APIKey
	q := url.Values{}
	if team != "" {
		q.Set("team", team)
	}
	if err := c.call(ctx, request{method: http.MethodGet, path: "/v1/keys", query: q}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// RevokeKey revokes an API key at once.
func (c *Client) RevokeKey(ctx context.Context, id string) (*APIKey, error) {
	var out APIKey
	if err := c.call(ctx, request{method: http.MethodDelete, path: "/v1/keys/" + url.PathEscape(id)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateTeam makes a team with its quotas.
func (c *Client) CreateTeam(ctx context.Context, req CreateTeamRequest) (*Team, error) {
	var out Team
	if err := c.call(ctx, request{method: http.MethodPost, path: "/v1/teams", in: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListTeams lists the teams.
func (c *Client) ListTeams(ctx context.Context) ([]Team, error) {
	var out []Team
	if err := c.call(ctx, request{method: http.MethodGet, path: "/v1/teams"}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// SetQuotas replaces a team's quotas.
func (c *Client) SetQuotas(ctx context.Context, team string, q Quotas) (*Team, error) {
	var out Team
	if err := c.call(ctx, request{method: http.MethodPut, path: "/v1/teams/" + url.PathEscape(team) + "/quotas", in: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteTeam deletes a team that owns nothing.
func (c *Client) DeleteTeam(ctx context.Context, team string) error {
	return c.call(ctx, request{method: http.MethodDelete, path: "/v1/teams/" + url.PathEscape(team)}, nil)
}

// TeamUsage returns what a team holds now against its quotas.
func (c *Client) TeamUsage(ctx context.Context, team string) (*TeamUsage, error) {
	var out TeamUsage
	if err := c.call(ctx, request{method: http.MethodGet, path: "/v1/teams/" + url.PathEscape(team) + "/usage"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Audit lists up to limit audit entries with Seq > after; team "" lists
// every team's the caller may see.
func (c *Client) Audit(ctx context.Context, team string, after int64, limit int) ([]AuditEntry, error) {
	q := url.Values{}
	if team != "" {
		q.Set("team", team)
	}
	if after > 0 {
		q.Set("after", strconv.FormatInt(after, 10))
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out []AuditEntry
	if err := c.call(ctx, request{method: http.MethodGet, path: "/v1/audit", query: q}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// SetTeamWebhook sends a team's events to url, signed with secret.
func (c *Client) SetTeamWebhook(ctx context.Context, team string, h TeamWebhook) error {
	return c.call(ctx, request{method: http.MethodPut, path: "/v1/teams/" + url.PathEscape(team) + "/webhook", in: h}, nil)
}

// DeleteTeamWebhook stops sending a team's events to its webhook.
func (c *Client) DeleteTeamWebhook(ctx context.Context, team string) error {
	return c.call(ctx, request{method: http.MethodDelete, path: "/v1/teams/" + url.PathEscape(team) + "/webhook"}, nil)
}
