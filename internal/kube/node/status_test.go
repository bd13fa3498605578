package node

import (
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/kube/podspec"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// TestPodStatusCarriesTheSandboxState: what a host writes into the pod's
// status reads back (podspec.HostState) as the sandbox's state, so the
// gateway lists sandboxes from its watch cache without asking the hosts.
func TestPodStatusCarriesTheSandboxState(t *testing.T) {
	f := newFake()
	p := NewProvider(f, fakeOwners{}, nil, "h1", "10.0.0.1", nil)
	pod := sandboxPod("box", true)
	id := podspec.IDForPod("sbx", "box")
	if _, _, _, ok := podspec.HostState(pod); ok {
		t.Fatal("a pod no host reported on has a state")
	}
	started := time.Date(2026, 12, 5, 1, 2, 3, 0, time.UTC)
	for _, st := range []wire.State{wire.StateCreating, wire.StateRestoring, wire.StateStarted, wire.StateStopped,
		wire.StatePaused, wire.StateArchived, wire.StateError} {
		f.mu.Lock()
		f.local[id] = &store.Sandbox{ID: id, State: st, StartedAt: started, Error: "boom"}
		f.mu.Unlock()
		pod.Status = *p.status(t.Context(), pod)
		got, at, msg, ok := podspec.HostState(pod)
		if !ok || got != st {
			t.Fatalf("state %s reads back as %q (%v)", st, got, ok)
		}
		if (st == wire.StateStarted) != at.Equal(started) || (st == wire.StateError) != (msg == "boom") {
			t.Fatalf("state %s reads back started at %v, error %q", st, at, msg)
		}
	}
}
