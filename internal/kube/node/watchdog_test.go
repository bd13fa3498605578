package node

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// A host whose lease goes unrenewed freezes the sandboxes it runs for
// pods (and only those) once, and thaws them once the lease renews.
func TestLeaseWatchdogFreezesAndThaws(t *testing.T) {
	f := newFake()
	f.local["sbx-pod"] = &store.Sandbox{ID: "sbx-pod", State: wire.StateStarted, Spec: store.Spec{Labels: map[string]string{LabelPodNamespace: "sbx", LabelPodName: "a"}}}
	f.local["sbx-stopped"] = &store.Sandbox{ID: "sbx-stopped", State: wire.StateStopped, Spec: store.Spec{Labels: map[string]string{LabelPodNamespace: "sbx", LabelPodName: "b"}}}
	f.local["sbx-own"] = &store.Sandbox{ID: "sbx-own", State: wire.StateStarted} // not a pod's
	p := NewProvider(f, nil, nil, "n", "127.0.0.1", nil)

	var cut atomic.Bool
	renewed := func(context.Context) (time.Time, error) {
		if cut.Load() {
			return time.Time{}, errors.New("kube-apiserver unreachable")
		}
		return time.Now(), nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.watchLease(ctx, renewed, 40*time.Millisecond)

	time.Sleep(100 * time.Millisecond)
	if h := f.history(); h != "" || p.isolated() {
		t.Fatalf("with the lease renewed: %q, isolated %v", h, p.isolated())
	}
	cut.Store(true)
	waitUntil(t, p.isolated)
	time.Sleep(100 * time.Millisecond) // more checks while cut off: no second freeze
	if h := f.history(); h != "freeze sbx-pod" {
		t.Fatalf("cut off: %q, want the pod's started sandbox frozen once", h)
	}
	cut.Store(false)
	waitUntil(t, func() bool { return !p.isolated() })
	if h := f.history(); h != "freeze sbx-pod; thaw sbx-pod" {
		t.Fatalf("renewed again: %q", h)
	}
}

func waitUntil(t *testing.T, ok func() bool) {
	t.Helper()
	for range 500 {
		if ok() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("condition not met")
}
