package metrics

import "github.com/prometheus/client_golang/prometheus"

var poolReadyDesc = prometheus.NewDesc("sbx_pool_ready", "Started instances waiting in a warm pool, by team and pool.", []string{"team", "pool"}, nil)

// poolCollector reads the warm pools at scrape time. How long adoptions
// and refills take is sbx_sandbox_operation_duration_seconds with
// operation "adopt" and "pool-fill" (a cold create: "create").
type poolCollector func() map[[2]string]int

func (poolCollector) Describe(ch chan<- *prometheus.Desc) { ch <- poolReadyDesc }

func (f poolCollector) Collect(ch chan<- prometheus.Metric) {
	for k, n := range f() {
		ch <- prometheus.MustNewConstMetric(poolReadyDesc, prometheus.GaugeValue, float64(n), k[0], k[1])
	}
}

// ObservePools adds the warm pools' series; ready returns the ready
// instances by [team, pool].
func (m *Metrics) ObservePools(ready func() map[[2]string]int) {
	if m == nil {
		return
	}
	m.pools = ready
	m.reg.MustRegister(poolCollector(ready))
}
