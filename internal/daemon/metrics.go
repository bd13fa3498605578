package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/api"
	"github.com/sbxhq/sbx/internal/metrics"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/internal/webhook"
)

// MetricsConfig says how /metrics is served (docs/metrics.md).
type MetricsConfig struct {
	// Token is a read-only key for /metrics on the API's address, besides
	// the admin key.
	Token string
	// Listen, when set, is a second address serving /metrics without any
	// key (for a scraper on a private network or loopback).
	Listen string
	// NoPerSandbox leaves out the per-sandbox series (one set per running
	// sandbox); the stats endpoint still works.
	NoPerSandbox bool
}

// daemonMetrics is the daemon's metrics and what reads them.
type daemonMetrics struct {
	cfg     MetricsConfig
	metrics *metrics.Metrics
	usage   *metrics.Sampler
}

func newMetrics(cfg Config, st store.Store, hooks *webhook.Sender) *daemonMetrics {
	usage := metrics.NewSampler(cfg.DataDir)
	opt := metrics.Options{
		Sandboxes: func(ctx context.Context) ([]*store.Sandbox, error) {
			return st.ListSandboxes(ctx, store.Filter{UserSandboxes: true})
		},
		Usage:    usage,
		Webhooks: hooks.Queues,
	}
	opt.Teams = teamUsages(st) // teams.go
	if cfg.Metrics.NoPerSandbox {
		opt.Usage = nil
	}
	m := metrics.New(opt)
	agentapi.ObserveCall = m.AgentCall
	return &daemonMetrics{cfg: cfg.Metrics, metrics: m, usage: usage}
}

// api is what the API serves: /metrics with its keys, and sandbox stats.
func (d *daemonMetrics) api() api.MetricsConfig {
	return api.MetricsConfig{Metrics: d.metrics, Usage: d.usage, Token: d.cfg.Token}
}

// serve serves /metrics without a key on the metrics address, if one is
// set, until ctx is done.
func (d *daemonMetrics) serve(ctx context.Context) error {
	if d.cfg.Listen == "" {
		return nil
	}
	ln, err := net.Listen("tcp", d.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s for metrics: %w", d.cfg.Listen, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", d.metrics.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	slog.Info("serving metrics without a key", "listen", ln.Addr().String())
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("metrics server", "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	return nil
}
