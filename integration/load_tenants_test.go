package integration

import (
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/loadgen"
	"github.com/sbxhq/sbx/sdk"
)

// TestTenantAtItsRateLimitBesideOneUnder: while one tenant's key sends
// requests as fast as they are answered (at its rate limit, most answered
// 429), another tenant's key sending under its limit gets every call
// answered: no 429, no error. Both tenants' latencies are logged, not
// asserted (bench/load.go measures them).
func TestTenantAtItsRateLimitBesideOneUnder(t *testing.T) {
	d := startDaemon(t, "--rate-limit", "20", "--rate-burst", "20")
	tenant := func(team string) loadgen.Tenant {
		c, _ := d.teamKey(team, sdk.Quotas{}, allScopes...)
		sb, err := c.CreateSandbox(t.Context(), sdk.CreateSandboxRequest{})
		if err != nil {
			t.Fatalf("create in %s: %v", team, err)
		}
		d.created[sb.ID] = true
		return loadgen.Tenant{Client: c, Sandbox: sb.ID}
	}
	calm, hot := tenant("calm"), tenant("hot")
	// 10 calls a second, half the limit.
	res, err := loadgen.Neighbours(calm, hot, 100, 100*time.Millisecond, 8)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range res.CalmErrors {
		t.Errorf("the tenant under its limit: %v", err)
	}
	if len(res.HotOther) > 0 {
		t.Errorf("the tenant at its limit got %d errors other than 429, first: %v", len(res.HotOther), res.HotOther[0])
	}
	if res.HotLimited == 0 {
		t.Errorf("the hammering tenant was never limited (%d calls answered): it was not at its limit", res.HotOK)
	}
	t.Logf("calm tenant p50/p99 alone %s/%s, beside the hot one %s/%s; hot tenant %d answered, %d limited (shared machine)",
		loadgen.Percentile(res.Alone, 50), loadgen.Percentile(res.Alone, 99),
		loadgen.Percentile(res.Beside, 50), loadgen.Percentile(res.Beside, 99), res.HotOK, res.HotLimited)
}
