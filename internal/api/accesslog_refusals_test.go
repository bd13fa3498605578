package api

import (
	"context"
	"math"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/auth/keys"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// TestAccessLogThinsRateLimitRefusals: a key at its rate limit is refused
// thousands of times a second (bench -load measured ~5,700, a line each
// ~1.4 MB/s of log); the access log writes at most one line a second for
// those refusals, each counting the ones it left out, so a tenant at its
// limit cannot fill the disk the daemon's log is on. Every other answer
// still gets its line.
func TestAccessLogThinsRateLimitRefusals(t *testing.T) {
	buf := captureLog(t)
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "sbx.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc, err := keys.New(context.Background(), st, auth.AdminToken(testKey))
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	k, err := svc.Create(context.Background(), wire.CreateKeyRequest{Scopes: []string{wire.ScopeSandboxesRead}})
	if err != nil {
		t.Fatal(err)
	}
	s := New(newFake(), fakeImages{}, svc)
	s.SetTenancy(Tenancy{Keys: svc, Teams: st, Gate: &authz.Gate{Keys: svc, Limits: auth.NewRateLimits(0.001, 1), RequestID: RequestID}})

	const n = 500
	began := time.Now()
	refused := 0
	for i := range n {
		rec := do(s, "GET", "/v1/sandboxes", k.Key, "")
		if rec.Code == http.StatusTooManyRequests {
			refused++
		} else if i > 0 || rec.Code != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	elapsed := time.Since(began)
	if rec := do(s, "GET", "/v1/sandboxes", testKey, ""); rec.Code != http.StatusOK { // the admin token is not limited
		t.Fatalf("admin: %d", rec.Code)
	}
	var ok, limited, left int
	for _, l := range logLines(t, buf) {
		switch l["status"] {
		case float64(http.StatusOK):
			ok++
		case float64(http.StatusTooManyRequests):
			limited++
			u, _ := l["unlogged429"].(float64)
			left += int(u)
		}
	}
	if ok != 2 {
		t.Errorf("%d access lines of answered requests, want 2", ok)
	}
	most := 1 + int(math.Ceil(elapsed.Seconds()))
	if limited < 1 || limited > most {
		t.Errorf("%d access lines for %d refusals in %s, want 1 to %d", limited, refused, elapsed, most)
	}
	if limited+left > refused {
		t.Errorf("the lines count %d refusals (%d lines + %d left out), more than the %d made", limited+left, limited, left, refused)
	}
}
