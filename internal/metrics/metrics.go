// Package metrics defines the daemon's Prometheus metrics and serves them.
//
// Every series has bounded label values: API routes are the route table's
// patterns (never raw paths), operations and outcomes are fixed words, and
// per-sandbox series exist only for sandboxes with a running or paused
// instance (and can be turned off). Counts of sandboxes and per-sandbox
// usage are read from the store and the cgroups at scrape time, so they
// never drift from the truth.
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Options say where the scrape-time metrics come from.
type Options struct {
	// Sandboxes lists every sandbox at scrape time (the Manager's List).
	Sandboxes func(ctx context.Context) ([]*store.Sandbox, error)
	// Usage reads per-sandbox usage; nil turns per-sandbox series off.
	Usage *Sampler
	// Webhooks reports the webhook queues: events queued now, and dropped
	// since start because a queue was full. nil: no webhook series.
	Webhooks func() (queued int, dropped uint64)
	// Teams reads every team's usage and quotas (teams.go); nil: no team series.
	Teams func(ctx context.Context) ([]wire.TeamUsage, error)
}

// Metrics holds the daemon's metrics. Its methods are safe for concurrent
// use; a nil *Metrics ignores every observation.
type Metrics struct {
	reg   *prometheus.Registry
	opt   Options
	pools func() map[[2]string]int // ObservePools

	requests        *prometheus.CounterVec
	requestDuration *prometheus.HistogramVec
	opDuration      *prometheus.HistogramVec
	lazyStarts      *prometheus.CounterVec
	idleActions     *prometheus.CounterVec
	schedulerLag    prometheus.Histogram
	agentCalls      *prometheus.HistogramVec
}

// Operations spread from milliseconds (a freeze) to minutes (an archive).
var opBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// New registers the metrics, with the Go runtime's and the process's own.
func New(opt Options) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		opt: opt,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sbx_api_requests_total", Help: "API requests by method, route pattern and status code.",
		}, []string{"method", "route", "code"}),
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "sbx_api_request_duration_seconds", Help: "API request latency by method and route pattern (streams: until they end).",
			Buckets: prometheus.DefBuckets,
		}, []string{"method", "route"}),
		opDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "sbx_sandbox_operation_duration_seconds", Help: "Duration of sandbox operations (create, start, stop, pause, resume, fork, archive, restore) by outcome (ok, error).",
			Buckets: opBuckets,
		}, []string{"operation", "outcome"}),
		lazyStarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sbx_sandbox_lazy_starts_total", Help: "Sandboxes started or resumed by a toolbox call or preview, by operation and outcome.",
		}, []string{"operation", "outcome"}),
		idleActions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sbx_sandbox_idle_actions_total", Help: "Sandboxes stopped or paused for being idle, by operation and outcome.",
		}, []string{"operation", "outcome"}),
		schedulerLag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "sbx_scheduler_lag_seconds", Help: "How late the lifecycle scheduler acted on a due deadline.",
			Buckets: []float64{.001, .005, .01, .05, .1, .5, 1, 5, 10, 60},
		}),
		agentCalls: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "sbx_agent_call_duration_seconds", Help: "Round trip of daemon-to-agent calls (to the response headers) by agent route pattern and outcome.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 5, 30},
		}, []string{"route", "outcome"}),
	}
	m.reg.MustRegister(m.requests, m.requestDuration, m.opDuration, m.lazyStarts, m.idleActions, m.schedulerLag, m.agentCalls,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if opt.Sandboxes != nil {
		m.reg.MustRegister(&sandboxCollector{list: opt.Sandboxes, usage: opt.Usage})
	}
	if opt.Webhooks != nil {
		m.reg.MustRegister(webhookCollector(opt.Webhooks))
	}
	if opt.Teams != nil {
		m.reg.MustRegister(teamCollector(opt.Teams))
	}
	return m
}

// Register adds collectors of other packages (the HTTP egress proxy's).
func (m *Metrics) Register(cs ...prometheus.Collector) {
	if m != nil {
		m.reg.MustRegister(cs...)
	}
}

// Handler serves the metrics in the Prometheus text format: every team's
// and the daemon's own, for the operator.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorLog: nil, ErrorHandling: promhttp.ContinueOnError})
}

// TeamHandler serves what one team may see: its sandboxes (counts and
// usage), its usage and quotas and its warm pools. The daemon's own series
// (requests of every team, the process, webhooks) are the operator's.
func (m *Metrics) TeamHandler(team string) http.Handler {
	reg := prometheus.NewRegistry()
	if m.opt.Sandboxes != nil {
		list := func(ctx context.Context) ([]*store.Sandbox, error) {
			all, err := m.opt.Sandboxes(ctx)
			var mine []*store.Sandbox
			for _, sb := range all {
				if teamOf(sb.Team) == team {
					mine = append(mine, sb)
				}
			}
			return mine, err
		}
		reg.MustRegister(&sandboxCollector{list: list, usage: m.opt.Usage})
	}
	if m.opt.Teams != nil {
		reg.MustRegister(teamCollector(func(ctx context.Context) ([]wire.TeamUsage, error) {
			all, err := m.opt.Teams(ctx)
			var mine []wire.TeamUsage
			for _, u := range all {
				if u.Team == team {
					mine = append(mine, u)
				}
			}
			return mine, err
		}))
	}
	if m.pools != nil {
		reg.MustRegister(poolCollector(func() map[[2]string]int {
			mine := map[[2]string]int{}
			for k, n := range m.pools() {
				if teamOf(k[0]) == team {
					mine[k] = n
				}
			}
			return mine
		}))
	}
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// teamOf is the team of a record: one without a team is the default team's.
func teamOf(team string) string {
	if team == "" {
		return auth.DefaultTeam
	}
	return team
}

// ObserveRequest counts one API request to route (a route table pattern).
func (m *Metrics) ObserveRequest(method, route string, code int, took time.Duration) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(method, route, strconv.Itoa(code)).Inc()
	m.requestDuration.WithLabelValues(method, route).Observe(took.Seconds())
}

// Operation records one sandbox operation; reason is the one it records
// with its states ("user", "lazy", "idle", …). It implements sandbox.Observer.
func (m *Metrics) Operation(op, reason string, took time.Duration, err error) {
	if m == nil {
		return
	}
	out := outcome(err)
	m.opDuration.WithLabelValues(op, out).Observe(took.Seconds())
	switch {
	case reason == "lazy" && (op == "start" || op == "resume"):
		m.lazyStarts.WithLabelValues(op, out).Inc()
	case reason == "idle" && (op == "stop" || op == "pause"):
		m.idleActions.WithLabelValues(op, out).Inc()
	}
}

// SchedulerLag records how late a deadline was acted on.
func (m *Metrics) SchedulerLag(late time.Duration) {
	if m == nil {
		return
	}
	m.schedulerLag.Observe(max(late, 0).Seconds())
}

// AgentCall records one daemon-to-agent round trip; route is an agent
// route pattern (agentapi.ObserveCall).
func (m *Metrics) AgentCall(route string, took time.Duration, err error) {
	if m == nil {
		return
	}
	m.agentCalls.WithLabelValues(route, outcome(err)).Observe(took.Seconds())
}

func outcome(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}
