package authz

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

type memAudit struct{ entries []wire.AuditEntry }

func (m *memAudit) AppendAudit(_ context.Context, es []wire.AuditEntry) error {
	m.entries = append(m.entries, es...)
	return nil
}
func (m *memAudit) ListAudit(context.Context, string, int64, int) ([]wire.AuditEntry, error) {
	return m.entries, nil
}
func (m *memAudit) PruneAudit(context.Context, time.Time) (int64, error) {
	return 0, nil
}

// TestAdmitRecordsHowAnOperationEnded: a non-HTTP write's entry takes the
// status and code of the error it ended with; a read leaves none; an
// operation without a scope needs admin.
func TestAdmitRecordsHowAnOperationEnded(t *testing.T) {
	st := &memAudit{}
	g := &Gate{Audit: NewAuditLog(st, 0)}
	defer g.Audit.Close()
	p := auth.Principal{KeyID: "k1", Team: "acme", Scopes: []auth.Scope{auth.ScopeExec, auth.ScopeSandboxesRead}}
	done, err := g.Admit(context.Background(), p, Exec.At("RPC", "/process.Process/Start"))
	if err != nil {
		t.Fatal(err)
	}
	done(errdefs.NotFound(wire.CodeSandboxNotFound, "gone"))
	done(nil) // only the first end counts
	read, _ := g.Admit(context.Background(), p, Read.At("GET", "/x"))
	read(nil)
	if _, err := g.Admit(context.Background(), p, Op{Method: "X", Path: "/undecided", Write: true}); errdefs.CodeOf(err) != wire.CodeMissingScope {
		t.Fatalf("an operation without a scope: %v, want MISSING_SCOPE", err)
	}
	entries, _ := g.Audit.List(context.Background(), "", 0, 0)
	if len(entries) != 2 {
		t.Fatalf("entries %+v, want the RPC's and the refused undecided one", entries)
	}
	e := entries[0]
	if e.Method != "RPC" || e.Path != "/process.Process/Start" || e.Status != http.StatusNotFound || e.Code != wire.CodeSandboxNotFound || e.KeyID != "k1" || e.Team != "acme" {
		t.Fatalf("entry %+v", e)
	}
	if entries[1].Status != http.StatusForbidden || entries[1].Path != "/undecided" {
		t.Fatalf("refused entry %+v", entries[1])
	}
}

// TestInProcessCallsCountOnce: what a surface does in process for a request
// the gate admitted (Daytona's layer calling sbx's own routes) is not
// counted against the key's rate limit again, nor audited again when the
// request was an audited write; its scope is still checked. A read's
// in-process write is audited; another key's request is counted as usual.
func TestInProcessCallsCountOnce(t *testing.T) {
	st := &memAudit{}
	g := &Gate{Audit: NewAuditLog(st, 0), Limits: auth.NewRateLimits(0.001, 1)}
	defer g.Audit.Close()
	p := auth.Principal{KeyID: "k1", Team: "acme", Scopes: []auth.Scope{auth.ScopeSandboxesWrite, auth.ScopeSandboxesRead}}
	admit := func(ctx context.Context, p auth.Principal, op Op) (*http.Request, error) {
		r, _ := http.NewRequestWithContext(ctx, op.Method, op.Path, nil)
		w := httptest.NewRecorder()
		_, r, end, err := g.HTTP(w, r, p, op)
		if err == nil {
			w.WriteHeader(http.StatusOK)
		}
		end()
		return r, err
	}
	outer, err := admit(context.Background(), p, Write.At("POST", "/daytona/api/snapshots"))
	if err != nil {
		t.Fatal(err)
	}
	inner, err := admit(outer.Context(), p, Write.At("POST", "/v1/images"))
	if err != nil {
		t.Fatalf("the in-process call was counted against the key's limit again: %v", err)
	}
	if _, err := admit(inner.Context(), p, Admin.At("DELETE", "/v1/keys/x")); errdefs.CodeOf(err) != wire.CodeMissingScope {
		t.Fatalf("an in-process call beyond the key's scopes: %v, want MISSING_SCOPE", err)
	}
	other := auth.Principal{KeyID: "k2", Scopes: p.Scopes}
	if _, err := admit(outer.Context(), other, Read.At("GET", "/v1/sandboxes")); err != nil {
		t.Fatal(err) // k2's first request: its own bucket
	}
	if _, err := admit(outer.Context(), other, Read.At("GET", "/v1/sandboxes")); errdefs.CodeOf(err) != wire.CodeRateLimited {
		t.Fatalf("another key's second request under k1's admission: %v, want RATE_LIMITED", err)
	}
	g.Limits = nil // k1 is out of tokens: what follows is about the audit
	read, err := admit(context.Background(), p, Read.At("GET", "/daytona/api/sandbox/x"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admit(read.Context(), p, Write.At("POST", "/v1/sandboxes/x/start")); err != nil {
		t.Fatal(err)
	}
	g.Audit.Flush(context.Background())
	entries, _ := g.Audit.List(context.Background(), "", 0, 0)
	var paths []string
	for _, e := range entries {
		paths = append(paths, e.Method+" "+e.Path)
	}
	if want := []string{"POST /daytona/api/snapshots", "POST /v1/sandboxes/x/start"}; !slices.Equal(paths, want) {
		t.Fatalf("audited %v, want %v (the write once; a read's in-process write)", paths, want)
	}
}
