package authz

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/sdk"
)

type memAudit struct{ entries []sdk.AuditEntry }

func (m *memAudit) AppendAudit(_ context.Context, es []sdk.AuditEntry) error {
	m.entries = append(m.entries, es...)
	return nil
}
func (m *memAudit) ListAudit(context.Context, string, int64, int) ([]sdk.AuditEntry, error) {
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
	done(errdefs.NotFound(sdk.CodeSandboxNotFound, "gone"))
	done(nil) // only the first end counts
	read, _ := g.Admit(context.Background(), p, Read.At("GET", "/x"))
	read(nil)
	if _, err := g.Admit(context.Background(), p, Op{Method: "X", Path: "/undecided", Write: true}); errdefs.CodeOf(err) != sdk.CodeMissingScope {
		t.Fatalf("an operation without a scope: %v, want MISSING_SCOPE", err)
	}
	entries, _ := g.Audit.List(context.Background(), "", 0, 0)
	if len(entries) != 2 {
		t.Fatalf("entries %+v, want the RPC's and the refused undecided one", entries)
	}
	e := entries[0]
	if e.Method != "RPC" || e.Path != "/process.Process/Start" || e.Status != http.StatusNotFound || e.Code != sdk.CodeSandboxNotFound || e.KeyID != "k1" || e.Team != "acme" {
		t.Fatalf("entry %+v", e)
	}
	if entries[1].Status != http.StatusForbidden || entries[1].Path != "/undecided" {
		t.Fatalf("refused entry %+v", entries[1])
	}
}
