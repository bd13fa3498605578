package storetest

import (
	"context"
	"fmt"
	"github.com/sbxhq/sbx/internal/auth"
	"sync"
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
)

// NetworkStore is a store that also keeps leases and exposed ports.
type NetworkStore interface {
	store.Store
	store.NetworkStore
}

// RunNetwork checks the store.NetworkStore contract. open must return an
// empty store that is closed when the subtest ends.
func RunNetwork(t *testing.T, open func(t *testing.T) NetworkStore) {
	tests := []struct {
		name string
		fn   func(*testing.T, NetworkStore)
	}{
		{"LeaseRoundTrip", testLeaseRoundTrip},
		{"LeaseUniqueness", testLeaseUniqueness},
		{"LeaseConcurrent", testLeaseConcurrent},
		{"LeaseUnknownSandbox", testLeaseUnknownSandbox},
		{"Ports", testPorts},
		{"DeleteSandboxCascades", testNetworkCascade},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open(t)) })
	}
}

func testLeaseRoundTrip(t *testing.T, s NetworkStore) {
	ctx := auth.System(context.Background(), "test")
	mustCreate(t, s, fullSandbox("sbx-a", ""))
	l := &store.Lease{SandboxID: "sbx-a", IP: "10.88.0.2", CreatedAt: at(1)}
	if err := s.CreateLease(ctx, l); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetLease(ctx, "sbx-a")
	if err != nil {
		t.Fatal(err)
	}
	if got.IP != "10.88.0.2" || !got.CreatedAt.Equal(at(1)) {
		t.Fatalf("got %+v", got)
	}
	list, err := s.ListLeases(ctx)
	if err != nil || len(list) != 1 || list[0].SandboxID != "sbx-a" {
		t.Fatalf("ListLeases = %+v, %v", list, err)
	}
	if err := s.DeleteLease(ctx, "sbx-a"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteLease(ctx, "sbx-a"); err != nil {
		t.Fatalf("deleting a missing lease: %v", err)
	}
	if _, err := s.GetLease(ctx, "sbx-a"); !errdefs.Is(err, errdefs.KindNotFound) {
		t.Fatalf("GetLease after delete: %v, want NotFound", err)
	}
}

func testLeaseUniqueness(t *testing.T, s NetworkStore) {
	ctx := auth.System(context.Background(), "test")
	mustCreate(t, s, fullSandbox("sbx-a", ""))
	mustCreate(t, s, fullSandbox("sbx-b", ""))
	if err := s.CreateLease(ctx, &store.Lease{SandboxID: "sbx-a", IP: "10.88.0.2"}); err != nil {
		t.Fatal(err)
	}
	err := s.CreateLease(ctx, &store.Lease{SandboxID: "sbx-b", IP: "10.88.0.2"})
	if !errdefs.Is(err, errdefs.KindConflict) {
		t.Fatalf("second holder of one address: %v, want Conflict", err)
	}
	err = s.CreateLease(ctx, &store.Lease{SandboxID: "sbx-a", IP: "10.88.0.3"})
	if !errdefs.Is(err, errdefs.KindConflict) {
		t.Fatalf("second address for one sandbox: %v, want Conflict", err)
	}
}

// testLeaseConcurrent races many sandboxes for few addresses: each address
// must end up with exactly one holder.
func testLeaseConcurrent(t *testing.T, s NetworkStore) {
	ctx := auth.System(context.Background(), "test")
	const n = 16
	for i := range n {
		mustCreate(t, s, fullSandbox(fmt.Sprintf("sbx-%d", i), ""))
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.CreateLease(ctx, &store.Lease{SandboxID: fmt.Sprintf("sbx-%d", i), IP: fmt.Sprintf("10.0.0.%d", i%4)})
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errdefs.Is(err, errdefs.KindConflict):
			t.Fatalf("unexpected error: %v", err)
		}
	}
	list, _ := s.ListLeases(ctx)
	if ok != 4 || len(list) != 4 {
		t.Fatalf("%d leases granted, %d stored; want 4", ok, len(list))
	}
}

func testLeaseUnknownSandbox(t *testing.T, s NetworkStore) {
	ctx := auth.System(context.Background(), "test")
	err := s.CreateLease(ctx, &store.Lease{SandboxID: "sbx-nope", IP: "10.88.0.2"})
	if !errdefs.Is(err, errdefs.KindNotFound) {
		t.Fatalf("lease for an unknown sandbox: %v, want NotFound", err)
	}
	err = s.CreatePort(ctx, &store.Port{SandboxID: "sbx-nope", Port: 80, Token: "t"})
	if !errdefs.Is(err, errdefs.KindNotFound) {
		t.Fatalf("port of an unknown sandbox: %v, want NotFound", err)
	}
}

func testPorts(t *testing.T, s NetworkStore) {
	ctx := auth.System(context.Background(), "test")
	mustCreate(t, s, fullSandbox("sbx-a", ""))
	mustCreate(t, s, fullSandbox("sbx-b", ""))
	p := &store.Port{SandboxID: "sbx-a", Port: 8080, Public: true, Token: "tok1", CreatedAt: at(2)}
	if err := s.CreatePort(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := s.CreatePort(ctx, &store.Port{SandboxID: "sbx-a", Port: 3000, Token: "tok2"}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreatePort(ctx, &store.Port{SandboxID: "sbx-b", Port: 8080, Token: "tok3"}); err != nil {
		t.Fatal(err)
	}
	err := s.CreatePort(ctx, &store.Port{SandboxID: "sbx-a", Port: 8080, Token: "tok4"})
	if !errdefs.Is(err, errdefs.KindConflict) {
		t.Fatalf("exposing a port twice: %v, want Conflict", err)
	}
	got, err := s.GetPort(ctx, "sbx-a", 8080)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Public || got.Token != "tok1" || !got.CreatedAt.Equal(at(2)) {
		t.Fatalf("GetPort = %+v", got)
	}
	list, err := s.ListPorts(ctx, "sbx-a")
	if err != nil || len(list) != 2 || list[0].Port != 3000 || list[1].Port != 8080 {
		t.Fatalf("ListPorts(sbx-a) = %+v, %v", list, err)
	}
	if all, _ := s.ListPorts(ctx, ""); len(all) != 3 {
		t.Fatalf("ListPorts() = %d ports, want 3", len(all))
	}
	if err := s.DeletePort(ctx, "sbx-a", 8080); err != nil {
		t.Fatal(err)
	}
	if err := s.DeletePort(ctx, "sbx-a", 8080); !errdefs.Is(err, errdefs.KindNotFound) {
		t.Fatalf("deleting a missing port: %v, want NotFound", err)
	}
	if _, err := s.GetPort(ctx, "sbx-a", 8080); !errdefs.Is(err, errdefs.KindNotFound) {
		t.Fatalf("GetPort after delete: %v, want NotFound", err)
	}
}

func testNetworkCascade(t *testing.T, s NetworkStore) {
	ctx := auth.System(context.Background(), "test")
	mustCreate(t, s, fullSandbox("sbx-a", ""))
	if err := s.CreateLease(ctx, &store.Lease{SandboxID: "sbx-a", IP: "10.88.0.2"}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreatePort(ctx, &store.Port{SandboxID: "sbx-a", Port: 80, Token: "t"}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSandbox(ctx, "sbx-a"); err != nil {
		t.Fatal(err)
	}
	if l, _ := s.ListLeases(ctx); len(l) != 0 {
		t.Fatalf("leases left after the sandbox was deleted: %+v", l)
	}
	if p, _ := s.ListPorts(ctx, ""); len(p) != 0 {
		t.Fatalf("ports left after the sandbox was deleted: %+v", p)
	}
}
