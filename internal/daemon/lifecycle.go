package daemon

import (
	"log/slog"
	"path/filepath"

	"github.com/sbxhq/sbx/internal/api"
	"github.com/sbxhq/sbx/internal/blob"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/internal/webhook"
)

// lifecycle holds what the sandbox lifecycle needs from the daemon: the
// blob store for archives and the webhook sender for events.
type lifecycle struct {
	blobs   blob.Store
	hooks   *webhook.Sender
	onEvent func(store.Event)
}

func startLifecycle(cfg Config) (*lifecycle, error) {
	dir := cfg.BlobDir
	if dir == "" {
		dir = filepath.Join(cfg.DataDir, "blobs")
	}
	blobs, err := blob.NewDir(dir)
	if err != nil {
		return nil, err
	}
	if len(cfg.Webhooks) > 0 && cfg.WebhookSecret == "" {
		slog.Warn("webhooks are not signed: set --webhook-secret or SBX_WEBHOOK_SECRET")
	}
	hooks, err := webhook.New(webhook.Config{URLs: cfg.Webhooks, Secret: cfg.WebhookSecret})
	if err != nil {
		return nil, err
	}
	return &lifecycle{
		blobs: blobs,
		hooks: hooks,
		onEvent: func(e store.Event) {
			// Every state change of every sandbox passes here (sandbox.Manager.published).
			slog.Info("sandbox state", "sandbox", e.SandboxID, "name", e.SandboxName, "state", e.State, "reason", e.Reason, "message", e.Message)
			hooks.Send(e.Seq, api.Event(e))
		},
	}, nil
}

func (l *lifecycle) Close() { l.hooks.Close() }
