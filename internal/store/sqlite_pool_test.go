package store

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

func TestPoolRecordsAndHiddenPoolInstances(t *testing.T) {
	s, err := OpenSQLite(filepath.Join(t.TempDir(), "sbx.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := auth.System(context.Background(), "test")
	p := &PoolRecord{Team: auth.DefaultTeam, Name: "p", Spec: wire.CreatePoolRequest{Name: "p", Min: 2, Max: 3}}
	if err := s.PutPool(ctx, p, false); err != nil {
		t.Fatal(err)
	}
	if err := s.PutPool(ctx, p, false); !errdefs.Is(err, errdefs.KindConflict) {
		t.Fatalf("second pool of the same name: %v", err)
	}
	p.Spec.Min = 3
	if err := s.PutPool(ctx, p, true); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetPool(ctx, auth.DefaultTeam, "p"); err != nil || got.Spec.Min != 3 {
		t.Fatalf("get pool: %+v, %v", got, err)
	}

	inst := &Sandbox{ID: "sbx-pool1", State: wire.StateStarted, Pool: "p"}
	user := &Sandbox{ID: "sbx-user1", State: wire.StateStarted}
	for _, sb := range []*Sandbox{inst, user} {
		if err := s.CreateSandbox(ctx, sb); err != nil {
			t.Fatal(err)
		}
	}
	request := auth.WithPrincipal(ctx, auth.Admin)
	if _, err := s.GetSandbox(request, inst.ID); !errdefs.Is(err, errdefs.KindNotFound) {
		t.Fatalf("a request found a pool instance: %v", err)
	}
	if got, err := s.GetSandbox(ctx, inst.ID); err != nil || got.Pool != "p" {
		t.Fatalf("an internal lookup: %+v, %v", got, err)
	}
	if list, _ := s.ListSandboxes(ctx, Filter{UserSandboxes: true}); len(list) != 1 || list[0].ID != user.ID {
		t.Fatalf("user sandboxes: %v", list)
	}
	inst.Pool, inst.Name = "", "adopted"
	if err := s.UpdateSandbox(ctx, inst, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetSandbox(request, "adopted"); err != nil || got.ID != inst.ID {
		t.Fatalf("the adopted sandbox is not found: %v", err)
	}
	if err := s.DeletePool(ctx, auth.DefaultTeam, "p"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetPool(ctx, auth.DefaultTeam, "p"); !errdefs.Is(err, errdefs.KindNotFound) {
		t.Fatalf("deleted pool: %v", err)
	}
}
