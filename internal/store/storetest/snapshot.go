package storetest

import (
	"context"
	"fmt"
	"github.com/sbxhq/sbx/internal/auth"
	"reflect"
	"sync"
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// SnapshotStore is a store that also keeps snapshots.
type SnapshotStore interface {
	store.Store
	store.SnapshotStore
}

// RunSnapshots checks the store.SnapshotStore contract. open must return an
// empty store that is closed when the subtest ends.
func RunSnapshots(t *testing.T, open func(t *testing.T) SnapshotStore) {
	tests := []struct {
		name string
		fn   func(*testing.T, SnapshotStore)
	}{
		{"RoundTrip", testSnapshotRoundTrip},
		{"Missing", testSnapshotMissing},
		{"Expiry", testSnapshotExpiry},
		{"ConcurrentSameName", testSnapshotConcurrentSameName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open(t)) })
	}
}

func testSnapshotRoundTrip(t *testing.T, s SnapshotStore) {
	ctx := auth.System(context.Background(), "test")
	want := &store.Snapshot{
		Name: "snap-1", SandboxID: "sbx-a", Spec: fullSandbox("sbx-a", "").Spec,
		Memory: true, SizeBytes: 1 << 30, CreatedAt: at(1), TTLSeconds: 3600, ExpiresAt: at(9),
	}
	if err := s.CreateSnapshot(ctx, want); err != nil {
		t.Fatal(err)
	}
	bare := &store.Snapshot{Name: "snap-0"}
	if err := s.CreateSnapshot(ctx, bare); err != nil {
		t.Fatal(err)
	}
	if bare.CreatedAt.IsZero() {
		t.Error("CreateSnapshot did not set CreatedAt")
	}
	got, err := s.GetSnapshot(ctx, "", "snap-1")
	if err != nil {
		t.Fatal(err)
	}
	if err := equalSnapshot(got, want); err != nil {
		t.Error(err)
	}
	err = s.CreateSnapshot(ctx, &store.Snapshot{Name: "snap-1"})
	wantCode(t, err, errdefs.KindConflict, "SNAPSHOT_EXISTS")

	list, err := s.ListSnapshots(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "snap-1" || list[1].Name != "snap-0" {
		t.Fatalf("ListSnapshots = %v, %v; want snap-1 (older), snap-0", names(list), err)
	}
	if !list[1].ExpiresAt.IsZero() {
		t.Errorf("zero expiry came back as %v", list[1].ExpiresAt)
	}
	if err := s.DeleteSnapshot(ctx, "", "snap-1"); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetSnapshot(ctx, "", "snap-1")
	wantCode(t, err, errdefs.KindNotFound, "SNAPSHOT_NOT_FOUND")
}

func testSnapshotMissing(t *testing.T, s SnapshotStore) {
	ctx := auth.System(context.Background(), "test")
	_, err := s.GetSnapshot(ctx, "", "nope")
	wantCode(t, err, errdefs.KindNotFound, "SNAPSHOT_NOT_FOUND")
	wantCode(t, s.DeleteSnapshot(ctx, "", "nope"), errdefs.KindNotFound, "SNAPSHOT_NOT_FOUND")
	wantCode(t, s.SetSnapshotExpiry(ctx, "", "nope", at(1)), errdefs.KindNotFound, "SNAPSHOT_NOT_FOUND")
	wantCode(t, s.CreateSnapshot(ctx, &store.Snapshot{}), errdefs.KindInvalid, "INVALID_SNAPSHOT")
}

func testSnapshotExpiry(t *testing.T, s SnapshotStore) {
	ctx := auth.System(context.Background(), "test")
	if err := s.CreateSnapshot(ctx, &store.Snapshot{Name: "e", ExpiresAt: at(1)}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetSnapshotExpiry(ctx, "", "e", at(5)); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetSnapshot(ctx, "", "e"); err != nil || !got.ExpiresAt.Equal(at(5)) {
		t.Fatalf("expiry %v, %v; want %v", got.ExpiresAt, err, at(5))
	}
	var never store.Snapshot
	if err := s.SetSnapshotExpiry(ctx, "", "e", never.ExpiresAt); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetSnapshot(ctx, "", "e"); err != nil || !got.ExpiresAt.IsZero() {
		t.Fatalf("expiry %v, %v; want none", got.ExpiresAt, err)
	}
}

func testSnapshotConcurrentSameName(t *testing.T, s SnapshotStore) {
	ctx := auth.System(context.Background(), "test")
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = s.CreateSnapshot(ctx, &store.Snapshot{Name: "same", SandboxID: fmt.Sprint(i)}) })
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errdefs.CodeOf(err) != wire.CodeSnapshotExists:
			t.Errorf("unexpected error: %v", err)
		}
	}
	if ok != 1 {
		t.Errorf("%d creates of one name succeeded, want 1", ok)
	}
}

func equalSnapshot(got, want *store.Snapshot) error {
	g, w := *got, *want
	if !g.CreatedAt.Equal(w.CreatedAt) || !g.ExpiresAt.Equal(w.ExpiresAt) {
		return fmt.Errorf("times %v, %v; want %v, %v", g.CreatedAt, g.ExpiresAt, w.CreatedAt, w.ExpiresAt)
	}
	g.CreatedAt, g.ExpiresAt = w.CreatedAt, w.ExpiresAt
	if !reflect.DeepEqual(g, w) {
		return fmt.Errorf("got %+v\nwant %+v", g, w)
	}
	return nil
}

func names(list []*store.Snapshot) []string {
	var out []string
	for _, s := range list {
		out = append(out, s.Name)
	}
	return out
}
