package metrics

import (
	"context"
	"github.com/sbxhq/sbx/internal/auth"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sbxhq/sbx/wire"
)

var (
	teamUsageDesc = prometheus.NewDesc("sbx_team_usage",
		"What each team holds now, by resource: sandboxes, running, cpu, memory_mib, disk_mib, snapshots.",
		[]string{"team", "resource"}, nil)
	teamQuotaDesc = prometheus.NewDesc("sbx_team_quota",
		"Each team's quota by resource (as sbx_team_usage); a resource without a limit has no series.",
		[]string{"team", "resource"}, nil)
)

// teamCollector reads every team's usage and quotas at scrape time.
type teamCollector func(ctx context.Context) ([]wire.TeamUsage, error)

func (teamCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- teamUsageDesc
	ch <- teamQuotaDesc
}

func (f teamCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	teams, err := f(auth.System(ctx, "metrics scrape"))
	if err != nil {
		slog.Warn("metrics: read team usage", "err", err)
		return
	}
	for _, u := range teams {
		q := u.Quotas
		for _, r := range []struct {
			name        string
			used, limit float64
		}{
			{"sandboxes", float64(u.Sandboxes), float64(q.MaxSandboxes)},
			{"running", float64(u.Running), float64(q.MaxRunning)},
			{"cpu", u.CPU, q.CPU},
			{"memory_mib", float64(u.MemoryMiB), float64(q.MemoryMiB)},
			{"disk_mib", float64(u.DiskMiB), float64(q.DiskMiB)},
			{"snapshots", float64(u.Snapshots), float64(q.MaxSnapshots)},
		} {
			ch <- prometheus.MustNewConstMetric(teamUsageDesc, prometheus.GaugeValue, r.used, u.Team, r.name)
			if r.limit > 0 {
				ch <- prometheus.MustNewConstMetric(teamQuotaDesc, prometheus.GaugeValue, r.limit, u.Team, r.name)
			}
		}
	}
}
