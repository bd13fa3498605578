package metrics

import (
	"context"
	"github.com/sbxhq/sbx/internal/auth"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// states and classes are every value of the sandboxes gauge's labels, so a
// state with no sandbox reads 0 instead of vanishing.
var (
	states = []wire.State{wire.StateCreating, wire.StateStarting, wire.StateStarted, wire.StateStopping, wire.StateStopped,
		wire.StatePausing, wire.StatePaused, wire.StateResuming, wire.StateArchiving, wire.StateArchived, wire.StateRestoring,
		wire.StateDeleting, wire.StateError}
	classes = []string{"container", "gvisor"}
)

var (
	sandboxesDesc = prometheus.NewDesc("sbx_sandboxes", "Sandboxes by state and class.", []string{"state", "class"}, nil)
	scrapeErrDesc = prometheus.NewDesc("sbx_sandboxes_scrape_error", "1 when the sandboxes could not be listed at this scrape.", nil, nil)

	perSandbox = []string{"sandbox", "name", "class"}
	cpuDesc    = prometheus.NewDesc("sbx_sandbox_cpu_seconds_total", "CPU time used by the sandbox's current instance.", perSandbox, nil)
	memDesc    = prometheus.NewDesc("sbx_sandbox_memory_bytes", "Memory the sandbox uses, without reclaimable file cache.", perSandbox, nil)
	memLimDesc = prometheus.NewDesc("sbx_sandbox_memory_limit_bytes", "The sandbox's memory limit.", perSandbox, nil)
	pidsDesc   = prometheus.NewDesc("sbx_sandbox_pids", "Processes and threads in the sandbox.", perSandbox, nil)
	pidsLimDsc = prometheus.NewDesc("sbx_sandbox_pids_limit", "The sandbox's pids limit.", perSandbox, nil)
	diskDesc   = prometheus.NewDesc("sbx_sandbox_disk_bytes", "Disk space of the sandbox's own writes.", perSandbox, nil)
	rxDesc     = prometheus.NewDesc("sbx_sandbox_network_receive_bytes_total", "Bytes the sandbox received (bridge network).", perSandbox, nil)
	txDesc     = prometheus.NewDesc("sbx_sandbox_network_transmit_bytes_total", "Bytes the sandbox sent (bridge network).", perSandbox, nil)
)

// sandboxCollector reads the sandboxes (and, with usage, each running one's
// cgroups) at every scrape.
type sandboxCollector struct {
	list  func(ctx context.Context) ([]*store.Sandbox, error)
	usage *Sampler // nil: no per-sandbox series
}

func (c *sandboxCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{sandboxesDesc, scrapeErrDesc, cpuDesc, memDesc, memLimDesc, pidsDesc, pidsLimDsc, diskDesc, rxDesc, txDesc} {
		ch <- d
	}
}

func (c *sandboxCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := c.list(auth.System(ctx, "metrics scrape"))
	failed := 0.0
	if err != nil {
		failed = 1
	}
	ch <- prometheus.MustNewConstMetric(scrapeErrDesc, prometheus.GaugeValue, failed)
	if err != nil {
		return // no sandbox counts rather than wrong ones
	}
	counts := map[[2]string]int{}
	for _, sb := range list {
		counts[[2]string{string(sb.State), classOf(sb)}]++
	}
	for _, st := range states {
		for _, cl := range classes {
			ch <- prometheus.MustNewConstMetric(sandboxesDesc, prometheus.GaugeValue, float64(counts[[2]string{string(st), cl}]), string(st), cl)
			delete(counts, [2]string{string(st), cl})
		}
	}
	for k, n := range counts { // a state or class this list does not know yet
		ch <- prometheus.MustNewConstMetric(sandboxesDesc, prometheus.GaugeValue, float64(n), k[0], k[1])
	}
	if c.usage == nil {
		return
	}
	for _, sb := range list {
		if !sandbox.HasInstance(sb.State) { // per-sandbox series exist only for live instances
			continue
		}
		u := c.usage.Stats(sb)
		labels := []string{sb.ID, sb.Name, classOf(sb)}
		gauge := func(d *prometheus.Desc, v uint64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
		}
		counter := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
		}
		counter(cpuDesc, float64(u.CPUNanos)/1e9)
		gauge(memDesc, u.MemoryBytes)
		gauge(memLimDesc, u.MemoryLimitBytes)
		gauge(pidsDesc, u.Pids)
		gauge(pidsLimDsc, u.PidsLimit)
		gauge(diskDesc, u.DiskBytes)
		counter(rxDesc, float64(u.NetRxBytes))
		counter(txDesc, float64(u.NetTxBytes))
	}
}

func classOf(sb *store.Sandbox) string {
	if sb.Spec.Class == "" {
		return "container"
	}
	return sb.Spec.Class
}

var (
	webhookQueuedDesc  = prometheus.NewDesc("sbx_webhook_queue_depth", "Webhook events waiting for delivery, over all receivers.", nil, nil)
	webhookDroppedDesc = prometheus.NewDesc("sbx_webhook_dropped_total", "Webhook events dropped because a receiver's queue was full.", nil, nil)
)

// webhookCollector reads the webhook sender's queues at scrape time.
type webhookCollector func() (queued int, dropped uint64)

func (webhookCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- webhookQueuedDesc
	ch <- webhookDroppedDesc
}

func (f webhookCollector) Collect(ch chan<- prometheus.Metric) {
	q, d := f()
	ch <- prometheus.MustNewConstMetric(webhookQueuedDesc, prometheus.GaugeValue, float64(q))
	ch <- prometheus.MustNewConstMetric(webhookDroppedDesc, prometheus.CounterValue, float64(d))
}
