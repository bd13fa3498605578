package daemon

import (
	"context"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/sbxhq/sbx/internal/api"
	"github.com/sbxhq/sbx/internal/blob"
	"github.com/sbxhq/sbx/internal/blob/s3"
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
	blobs, err := openBlobs(cfg)
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

// openBlobs opens the S3 bucket of --blob-url or else the local blob directory.
func openBlobs(cfg Config) (blob.Store, error) {
	if cfg.BlobS3.URL != "" {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		st, err := s3.New(ctx, cfg.BlobS3)
		if err != nil {
			return nil, err
		}
		slog.Info("blob store", "s3", st.String())
		return st, nil
	}
	dir := cfg.BlobDir
	if dir == "" {
		dir = filepath.Join(cfg.DataDir, "blobs")
	}
	return blob.NewDir(dir)
}

func (l *lifecycle) Close() { l.hooks.Close() }
