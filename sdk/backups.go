package sdk

import (
	"context"
	"net/http"
	"net/url"
)

// CreateBackup packs the directory req.Path of a sandbox into the daemon's
// blob store.
func (c *Client) CreateBackup(ctx context.Context, idOrName string, req CreateBackupRequest) (*Backup, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	var out Backup
	if err := c.call(ctx, request{method: http.MethodPost, path: sandboxPath(idOrName, "/backups"), in: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListBackups returns the backups that have not expired; with sandbox set
// (id or name), only that sandbox's.
func (c *Client) ListBackups(ctx context.Context, sandbox string) ([]Backup, error) {
	q := url.Values{}
	if sandbox != "" {
		q.Set("sandbox", sandbox)
	}
	var out []Backup
	if err := c.call(ctx, request{method: http.MethodGet, path: "/v1/backups", query: q}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// GetBackup returns one backup.
func (c *Client) GetBackup(ctx context.Context, id string) (*Backup, error) {
	if err := checkName("backup id", id); err != nil {
		return nil, err
	}
	var out Backup
	if err := c.call(ctx, request{method: http.MethodGet, path: "/v1/backups/" + url.PathEscape(id)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteBackup deletes a backup.
func (c *Client) DeleteBackup(ctx context.Context, id string) error {
	if err := checkName("backup id", id); err != nil {
		return err
	}
	return c.call(ctx, request{method: http.MethodDelete, path: "/v1/backups/" + url.PathEscape(id)}, nil)
}

// RestoreBackup unpacks a backup into req.Sandbox at req.Path (missing or
// empty; default the backup's own path).
func (c *Client) RestoreBackup(ctx context.Context, id string, req RestoreBackupRequest) (*Backup, error) {
	if err := checkName("backup id", id); err != nil {
		return nil, err
	}
	var out Backup
	if err := c.call(ctx, request{method: http.MethodPost, path: "/v1/backups/" + url.PathEscape(id) + "/restore", in: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
