package daytona

import (
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/ui"
	"github.com/sbxhq/sbx/wire"
)

// MetricsHistory is the stats history sbx's dashboard keeps
// (internal/ui/history.go): each started sandbox's CPU and memory, one
// sample per interval over its window, oldest first.
type MetricsHistory interface {
	Samples(id string) []ui.Sample
}

// The series of Daytona's getMetrics that sbx's history holds. Memory
// cache and filesystem use are not sampled: their series are absent (the
// SDK shows 0; getMetricsLatest has the disk now).
var historySeries = map[string]bool{
	"daytona.sandbox.cpu.utilization":  true,
	"daytona.sandbox.cpu.limit":        true,
	"daytona.sandbox.memory.usage":     true,
	"daytona.sandbox.memory.limit":     true,
	"daytona.sandbox.memory.cache":     false,
	"daytona.sandbox.filesystem.usage": false,
	"daytona.sandbox.filesystem.total": false,
}

type metricPoint struct {
	Timestamp string  `json:"timestamp"`
	Value     float64 `json:"value"`
}

type metricSeries struct {
	MetricName string        `json:"metricName"`
	DataPoints []metricPoint `json:"dataPoints"`
}

// config serves GET /config, which the SDK reads for its analytics
// service: sbx has none, so getMetrics asks the sandbox route below.
func config(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]any{})
	return nil
}

// metricsHistory serves GET /sandbox/{id}/telemetry/metrics?from&to&metricNames:
// the samples of sbx's history in [from, to]. The history covers the
// daemon's window (one hour by default, since the daemon started); a
// longer window is answered with what the history holds.
func (h *Handler) metricsHistory(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var from, to time.Time
	for _, p := range []struct {
		name string
		t    *time.Time
	}{{"from", &from}, {"to", &to}} {
		s := q.Get(p.name)
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return invalid(wire.CodeInvalidParameter, "%s must be an RFC 3339 time, got %q", p.name, s)
		}
		*p.t = t
	}
	if to.Before(from) {
		return invalid(wire.CodeInvalidParameter, "to (%s) is before from (%s)", q.Get("to"), q.Get("from"))
	}
	names := q["metricNames"]
	if len(names) == 1 && strings.Contains(names[0], ",") {
		names = strings.Split(names[0], ",")
	}
	if len(names) == 0 {
		for n := range historySeries {
			names = append(names, n)
		}
		slices.Sort(names)
	}
	for _, n := range names {
		if _, ok := historySeries[n]; !ok {
			return invalid(wire.CodeInvalidParameter, "metric %q is not one of Daytona's sandbox metrics", n)
		}
	}
	sb, err := h.cfg.Sandboxes.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	var samples []ui.Sample
	if h.cfg.Metrics != nil {
		samples = h.cfg.Metrics.Samples(sb.ID)
	}
	cpus := math.Ceil(sb.Spec.CPU)
	value := map[string]func(ui.Sample) float64{
		"daytona.sandbox.cpu.utilization": func(s ui.Sample) float64 { return float64(s.CPUPercent) / max(cpus, 1) },
		"daytona.sandbox.cpu.limit":       func(ui.Sample) float64 { return cpus },
		"daytona.sandbox.memory.usage":    func(s ui.Sample) float64 { return float64(s.MemoryBytes) },
		"daytona.sandbox.memory.limit":    func(ui.Sample) float64 { return float64(int64(sb.Spec.MemoryMiB) << 20) },
	}
	out := []metricSeries{}
	for _, n := range names {
		if !historySeries[n] {
			continue
		}
		s := metricSeries{MetricName: n, DataPoints: []metricPoint{}}
		for _, x := range samples {
			t := time.Unix(x.Time, 0)
			if t.Before(from) || t.After(to) {
				continue
			}
			s.DataPoints = append(s.DataPoints, metricPoint{Timestamp: stamp(t), Value: value[n](x)})
		}
		out = append(out, s)
	}
	writeJSON(w, http.StatusOK, map[string]any{"series": out})
	return nil
}
