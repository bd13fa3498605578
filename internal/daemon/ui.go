package daemon

import (
	"context"
	"path/filepath"

	"github.com/sbxhq/sbx/internal/api"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/doctor"
	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/internal/ui"
	"github.com/sbxhq/sbx/internal/webhook"
)

// mountUI serves the dashboard at /ui (internal/ui) unless cfg.NoUI, and
// samples its stats history until ctx ends.
func mountUI(ctx context.Context, cfg Config, h *api.Server, mgr *sandbox.Manager, gate *authz.Gate, hooks *webhook.Sender) {
	if cfg.NoUI {
		return
	}
	d := ui.New(ui.Config{
		API: h, Gate: gate, Sandboxes: mgr,
		System: &ui.SystemConfig{
			DataDir: cfg.DataDir,
			Doctor: doctor.Config{
				DataDir: cfg.DataDir, StorePath: filepath.Join(cfg.DataDir, StoreFile),
				Bridge: cfg.Bridge, Subnet: cfg.Subnet, DiskReserveBytes: uint64(cfg.DiskReserveMiB) << 20,
			},
			WebhookURLs: len(cfg.Webhooks),
			Webhooks:    hooks.Queues,
		},
		SampleEvery: cfg.UISampleEvery,
	})
	go d.Run(ctx)
	h.Mount(ui.Prefix, d)
}
