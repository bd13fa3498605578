package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sbxhq/sbx/sdk"
)

// scrapeMetrics GETs url with key ("" for none) and parses the answer with
// the Prometheus text parser.
func scrapeMetrics(t *testing.T, url, key string) map[string]*dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return fams
}

// series returns the value of the first series of name whose labels include
// want, and whether there is one.
func series(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
next:
	for _, m := range fams[name].GetMetric() {
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
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// A memory hog in a sandbox shows in its stats and its /metrics series;
// stats of a stopped sandbox are zeros and do not start it; the series go
// with the sandbox.
func TestStatsAndMetricsFollowASandbox(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	c := d.client
	sb := d.create(sdk.CreateSandboxRequest{Name: "hog"})
	metricsURL := "http://" + d.addr + "/metrics"

	before, err := c.Stats(ctx, "hog")
	if err != nil {
		t.Fatal(err)
	}
	if before.State != sdk.StateStarted || before.CPUNanos == 0 || before.Pids == 0 || before.MemoryLimitBytes != uint64(sb.MemoryMiB)<<20 || before.PidsLimit != uint64(sb.PidsLimit) {
		t.Fatalf("stats of a fresh sandbox: %+v", before)
	}
	const hog = 64 << 20
	// A shell variable of 64 MiB: heap memory of a background process.
	if _, err := c.StartProcess(ctx, "hog", sdk.StartProcessRequest{ID: "hog", Shell: "x=$(head -c 67108864 /dev/zero | tr '\\0' a); sleep 600"}); err != nil {
		t.Fatal(err)
	}
	var now *sdk.SandboxStats
	waitFor(t, 60*time.Second, "memory use to rise by 64 MiB", func() bool {
		now, err = c.Stats(ctx, "hog")
		return err == nil && now.MemoryBytes >= before.MemoryBytes+hog
	})
	t.Logf("memory %d -> %d bytes, pids %d", before.MemoryBytes, now.MemoryBytes, now.Pids)

	fams := scrapeMetrics(t, metricsURL, d.token)
	if v, ok := series(fams, "sbx_sandbox_memory_bytes", map[string]string{"sandbox": sb.ID, "name": "hog"}); !ok || v < hog {
		t.Errorf("sbx_sandbox_memory_bytes of the hog: %v %v, want >= 64 MiB", v, ok)
	}
	for _, name := range []string{"sbx_sandbox_cpu_seconds_total", "sbx_sandbox_pids", "sbx_sandbox_disk_bytes", "sbx_sandbox_network_receive_bytes_total"} {
		if _, ok := series(fams, name, map[string]string{"sandbox": sb.ID}); !ok {
			t.Errorf("no %s of the sandbox", name)
		}
	}
	if v, _ := series(fams, "sbx_sandboxes", map[string]string{"state": "started", "class": "container"}); v != 1 {
		t.Errorf("started containers: %v, want 1", v)
	}
	if v, _ := series(fams, "sbx_sandbox_operation_duration_seconds", map[string]string{"operation": "create", "outcome": "ok"}); v != 1 {
		t.Errorf("creates observed: %v, want 1", v)
	}
	if v, _ := series(fams, "sbx_api_requests_total", map[string]string{"route": "/v1/sandboxes/{id}/stats", "code": "200"}); v < 2 {
		t.Errorf("stats requests counted: %v", v)
	}
	if v, _ := series(fams, "sbx_agent_call_duration_seconds", map[string]string{"route": "POST /processes", "outcome": "ok"}); v < 1 {
		t.Errorf("agent round trips observed: %v", v)
	}

	// Stopped: zeros and the state, and it stays stopped.
	if _, err := c.StopSandbox(ctx, "hog", sdk.StopOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	stopped, err := c.Stats(ctx, "hog")
	if err != nil {
		t.Fatal(err)
	}
	if stopped.State != sdk.StateStopped || stopped.MemoryBytes != 0 || stopped.Pids != 0 || stopped.CPUNanos != 0 {
		t.Errorf("stats of a stopped sandbox: %+v", stopped)
	}
	if got, _ := c.GetSandbox(ctx, "hog"); got == nil || got.State != sdk.StateStopped {
		t.Errorf("stats started the sandbox: %+v", got)
	}
	if _, ok := series(scrapeMetrics(t, metricsURL, d.token), "sbx_sandbox_memory_bytes", map[string]string{"sandbox": sb.ID}); ok {
		t.Error("a stopped sandbox still has memory series")
	}

	if _, err := c.StartSandbox(ctx, "hog"); err != nil {
		t.Fatal(err)
	}
	if _, ok := series(scrapeMetrics(t, metricsURL, d.token), "sbx_sandbox_memory_bytes", map[string]string{"sandbox": sb.ID}); !ok {
		t.Error("no memory series after the start")
	}
	if err := c.DeleteSandbox(ctx, "hog", true); err != nil {
		t.Fatal(err)
	}
	fams = scrapeMetrics(t, metricsURL, d.token)
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetValue() == sb.ID {
					t.Errorf("%s still has a series of the deleted sandbox", name)
				}
			}
		}
	}
}

// With --metrics-per-sandbox=false there are no per-sandbox series; the
// metrics address answers without a key, the metrics key opens /metrics on
// the API address and nothing else.
func TestMetricsWithoutPerSandboxSeries(t *testing.T) {
	metricsAddr := freeAddr(t)
	d := startDaemon(t, "--metrics-per-sandbox=false", "--metrics-listen", metricsAddr, "--metrics-token", "scrape-key")
	sb := d.create(sdk.CreateSandboxRequest{})
	fams := scrapeMetrics(t, "http://"+metricsAddr+"/metrics", "")
	if v, _ := series(fams, "sbx_sandboxes", map[string]string{"state": "started", "class": "container"}); v != 1 {
		t.Errorf("started containers: %v, want 1", v)
	}
	for _, name := range []string{"sbx_sandbox_memory_bytes", "sbx_sandbox_cpu_seconds_total", "sbx_sandbox_pids"} {
		if _, ok := fams[name]; ok {
			t.Errorf("%s is there with per-sandbox series off", name)
		}
	}
	scrapeMetrics(t, "http://"+d.addr+"/metrics", "scrape-key")
	resp, err := http.Get("http://" + d.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("/metrics on the API address without a key: %s", resp.Status)
	}
	if _, err := sdk.NewClient("http://"+d.addr, "scrape-key").GetSandbox(context.Background(), sb.ID); !sdk.IsUnauthorized(err) {
		t.Errorf("the metrics key opened the API: %v", err)
	}
	// The stats endpoint works whatever the metrics say; sbx stats shows it.
	if st, err := d.client.Stats(context.Background(), sb.ID); err != nil || st.MemoryBytes == 0 {
		t.Errorf("stats: %+v %v", st, err)
	}
	out, errOut, code := d.sbx("", "stats", "--no-stream", "-o", "json", sb.ID)
	var list []sdk.SandboxStats
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 1 || list[0].ID != sb.ID || list[0].CPUPercent == nil || list[0].MemoryBytes == 0 {
		t.Errorf("sbx stats -o json: %d %q %s", code, out, errOut)
	}
	out, errOut, code = d.sbx("", "stats", "--no-stream")
	if code != 0 || !strings.Contains(out, "MEM USAGE / LIMIT") || !strings.Contains(out, sb.ID) {
		t.Errorf("sbx stats: %d %q %s", code, out, errOut)
	}
}

// An idle stop and the lazy start after it are counted, with the
// scheduler's lag; stats of the stopped sandbox do not wake it.
func TestMetricsCountIdleStopsAndLazyStarts(t *testing.T) {
	metricsAddr := freeAddr(t)
	d := startDaemon(t, "--metrics-listen", metricsAddr)
	ctx := context.Background()
	one := 1
	sb := d.create(sdk.CreateSandboxRequest{AutoStopSeconds: &one})
	if _, err := d.client.WaitForStop(ctx, sb.ID, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := d.client.Stats(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	fams := scrapeMetrics(t, "http://"+metricsAddr+"/metrics", "")
	if v, _ := series(fams, "sbx_sandbox_idle_actions_total", map[string]string{"operation": "stop", "outcome": "ok"}); v != 1 {
		t.Errorf("idle stops: %v, want 1", v)
	}
	if v, _ := series(fams, "sbx_scheduler_lag_seconds", nil); v < 1 {
		t.Errorf("scheduler lag observations: %v", v)
	}
	if v, _ := series(fams, "sbx_sandbox_lazy_starts_total", map[string]string{"operation": "start"}); v != 0 {
		t.Errorf("lazy starts before any toolbox call: %v (did stats start it?)", v)
	}
	if _, err := d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Cmd: []string{"true"}}); err != nil {
		t.Fatal(err)
	}
	fams = scrapeMetrics(t, "http://"+metricsAddr+"/metrics", "")
	if v, _ := series(fams, "sbx_sandbox_lazy_starts_total", map[string]string{"operation": "start", "outcome": "ok"}); v != 1 {
		t.Errorf("lazy starts after an exec: %v, want 1", v)
	}
}
