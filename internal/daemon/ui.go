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

// statsHistory samples each running sandbox's CPU and memory until ctx
// ends, for the dashboard's charts and Daytona's getMetrics; nil when
// neither is served.
func statsHistory(ctx context.Context, cfg Config, mgr *sandbox.Manager) *ui.History {
	if cfg.NoUI && cfg.NoDaytona {
		return nil
	}
	h := ui.NewHistory(mgr, ui.UsageReader{}, cfg.UISampleEvery, 0)
	go h.Run(ctx)
	return h
}

// mountUI serves the dashboard at /ui (internal/ui) unless cfg.NoUI, with
// hist as its stats history.
func mountUI(cfg Config, h *api.Server, mgr *sandbox.Manager, gate *authz.Gate, hooks *webhook.Sender, hist *ui.History) {
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
		History: hist,
	})
	h.Mount(ui.Prefix, d)
}
