package api

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sbxhq/sbx/internal/metrics"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

const metricsKey = "metrics-key"

func newMetricsServer(t *testing.T) *Server {
	t.Helper()
	s, f := newTestServer(t)
	m := metrics.New(metrics.Options{
		Sandboxes: func(ctx context.Context) ([]*store.Sandbox, error) { return f.List(ctx, store.Filter{}) },
	})
	s.SetMetrics(MetricsConfig{Metrics: m, Token: metricsKey})
	return s
}

// scrape reads /metrics with key and parses it with the Prometheus parser.
func scrape(t *testing.T, s *Server, key string) map[string]*dto.MetricFamily {
	t.Helper()
	rec := do(s, "GET", "/metrics", key, "")
	if rec.Code != 200 {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// value is the value of the series of family name whose labels include want;
// -1 when there is none.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
next:
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

func TestMetricsNeedAKey(t *testing.T) {
	s := newMetricsServer(t)
	wantError(t, do(s, "GET", "/metrics", "", ""), 401, wire.CodeUnauthorized)
	wantError(t, do(s, "GET", "/metrics", "wrong", ""), 401, wire.CodeUnauthorized)
	scrape(t, s, testKey)
	scrape(t, s, metricsKey)
	// The metrics key opens /metrics only.
	wantError(t, do(s, "GET", "/v1/sandboxes", metricsKey, ""), 401, wire.CodeUnauthorized)

	// Without metrics the route says so.
	plain, _ := newTestServer(t)
	wantError(t, do(plain, "GET", "/metrics", testKey, ""), 503, wire.CodeMetricsUnavailable)
}

func TestMetricsCountRequestsByRoutePattern(t *testing.T) {
	s := newMetricsServer(t)
	get := map[string]string{"method": "GET", "route": "/v1/sandboxes/{id}", "code": "200"}
	missing := map[string]string{"method": "GET", "route": "/v1/sandboxes/{id}", "code": "404"}
	before := scrape(t, s, metricsKey)
	if v := value(before, "sbx_api_requests_total", get); v != -1 {
		t.Fatalf("a request counted before any was made: %v", v)
	}
	for range 3 {
		do(s, "GET", "/v1/sandboxes/sb1", testKey, "")
	}
	do(s, "GET", "/v1/sandboxes/nope-1", testKey, "")
	do(s, "GET", "/v1/sandboxes/nope-2", testKey, "")
	after := scrape(t, s, metricsKey)
	if v := value(after, "sbx_api_requests_total", get); v != 3 {
		t.Errorf("GET /v1/sandboxes/{id} 200: %v requests, want 3", v)
	}
	if v := value(after, "sbx_api_requests_total", missing); v != 2 {
		t.Errorf("GET /v1/sandboxes/{id} 404: %v requests, want 2", v)
	}
	if v := value(after, "sbx_api_request_duration_seconds", map[string]string{"method": "GET", "route": "/v1/sandboxes/{id}"}); v != 5 {
		t.Errorf("latency histogram has %v observations, want 5", v)
	}
	// Raw paths never become label values.
	for _, m := range after["sbx_api_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if strings.Contains(l.GetValue(), "nope") || strings.Contains(l.GetValue(), "sb1") {
				t.Errorf("label %s=%q is a raw path", l.GetName(), l.GetValue())
			}
		}
	}
	// Unauthorized requests are counted too, under their route.
	do(s, "GET", "/v1/sandboxes/sb1", "", "")
	if v := value(scrape(t, s, metricsKey), "sbx_api_requests_total", map[string]string{"route": "/v1/sandboxes/{id}", "code": "401"}); v != 1 {
		t.Errorf("401s counted: %v, want 1", v)
	}
}

func TestMetricsCountSandboxesByStateAndClass(t *testing.T) {
	s := newMetricsServer(t)
	fams := scrape(t, s, metricsKey)
	if v := value(fams, "sbx_sandboxes", map[string]string{"state": "started", "class": "container"}); v != 1 {
		t.Errorf("started containers: %v, want 1", v)
	}
	if v := value(fams, "sbx_sandboxes", map[string]string{"state": "stopped", "class": "gvisor"}); v != 0 {
		t.Errorf("stopped gvisor sandboxes: %v, want a 0 series", v)
	}
	if fams["sbx_sandbox_memory_bytes"] != nil {
		t.Error("per-sandbox series without a usage sampler")
	}
}

// Stats only look: the route is passive and answers from the record.
func TestStatsIsPassive(t *testing.T) {
	s, _ := newTestServer(t)
	var found bool
	for _, rt := range s.routes() {
		if rt.pattern == "/v1/sandboxes/{id}/stats" {
			found = true
			if countsAsActivity(rt) {
				t.Error("stats counts as activity")
			}
		}
	}
	if !found {
		t.Fatal("no stats route")
	}
	rec := do(s, "GET", "/v1/sandboxes/one/stats", testKey, "")
	var st wire.SandboxStats
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &st) != nil || st.ID != "sb1" || st.State != wire.StateStarted {
		t.Fatalf("stats: %d %s", rec.Code, rec.Body)
	}
	wantError(t, do(s, "GET", "/v1/sandboxes/nope/stats", testKey, ""), 404, wire.CodeSandboxNotFound)
}
