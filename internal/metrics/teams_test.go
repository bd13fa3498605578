package metrics

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sbxhq/sbx/wire"
)

func TestTeamSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(teamCollector(func(context.Context) ([]wire.TeamUsage, error) {
		return []wire.TeamUsage{{Team: "acme", Sandboxes: 3, Running: 1, CPU: 1.5, Quotas: wire.Quotas{MaxSandboxes: 5}}}, nil
	}))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			got[mf.GetName()+" "+labels["team"]+" "+labels["resource"]] = m.GetGauge().GetValue()
		}
	}
	want := map[string]float64{"sbx_team_usage acme sandboxes": 3, "sbx_team_usage acme running": 1, "sbx_team_usage acme cpu": 1.5,
		"sbx_team_quota acme sandboxes": 5}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	if _, ok := got["sbx_team_quota acme running"]; ok {
		t.Error("a series for a quota without a limit")
	}
}
