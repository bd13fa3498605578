package metrics

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Operations, lazy starts, idle stops, scheduler lag, agent calls and the
// webhook queues all show in the scraped text.
func TestObservationsReachTheScrape(t *testing.T) {
	queued, dropped := 3, uint64(7)
	m := New(Options{Webhooks: func() (int, uint64) { return queued, dropped }})
	m.Operation("start", "lazy", 20*time.Millisecond, nil)
	m.Operation("stop", "idle", time.Second, nil)
	m.Operation("pause", "idle", time.Second, errors.New("refused"))
	m.Operation("archive", "user", time.Second, nil)
	m.SchedulerLag(5 * time.Millisecond)
	m.AgentCall("GET /health", time.Millisecond, nil)

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`sbx_sandbox_operation_duration_seconds_count{operation="start",outcome="ok"} 1`,
		`sbx_sandbox_operation_duration_seconds_count{operation="pause",outcome="error"} 1`,
		`sbx_sandbox_lazy_starts_total{operation="start",outcome="ok"} 1`,
		`sbx_sandbox_idle_actions_total{operation="stop",outcome="ok"} 1`,
		`sbx_sandbox_idle_actions_total{operation="pause",outcome="error"} 1`,
		`sbx_scheduler_lag_seconds_count 1`,
		`sbx_agent_call_duration_seconds_count{outcome="ok",route="GET /health"} 1`,
		`sbx_webhook_queue_depth 3`,
		`sbx_webhook_dropped_total 7`,
	} {
		if !strings.Contains(rec.Body.String(), want+"\n") {
			t.Errorf("no %s", want)
		}
	}
	if fams["sbx_sandbox_lazy_starts_total"] == nil || len(fams["sbx_sandbox_lazy_starts_total"].GetMetric()) != 1 {
		t.Error("an archive or an idle stop counted as a lazy start")
	}
}

func TestNilMetricsIgnoreObservations(t *testing.T) {
	var m *Metrics
	m.Operation("start", "user", time.Second, nil)
	m.SchedulerLag(time.Second)
	m.AgentCall("forward", time.Second, nil)
	m.ObserveRequest("GET", "/healthz", 200, time.Second)
}
