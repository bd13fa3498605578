package node

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sbxhq/sbx/internal/store"
)

// A due action of a pod's sandbox goes to its Sandbox object: an idle
// stop, pause or archive suspends it, a TTL or auto-delete deletes it; a
// pod no Sandbox owns keeps the host's own timers.
func TestActChangesTheSandboxObject(t *testing.T) {
	f := newFake()
	owners := fakeOwners{}
	p := NewProvider(f, owners, nil, "h1", "10.0.0.1", nil)
	for _, name := range []string{"owned", "bare"} {
		if err := p.CreatePod(t.Context(), sandboxPod(name, name == "owned")); err != nil {
			t.Fatal(err)
		}
	}
	sbOf := func(name string) *store.Sandbox {
		return &store.Sandbox{Spec: store.Spec{Labels: map[string]string{LabelPodNamespace: "sbx", LabelPodName: name}}}
	}
	for _, c := range []struct {
		name, action string
		handled      bool
		want         string
	}{
		{"owned", "stop", true, "suspend sbx/owned uid-owned"},
		{"owned", "pause", true, "suspend sbx/owned uid-owned"},
		{"owned", "delete", true, "delete sbx/owned uid-owned"},
		{"bare", "stop", false, ""},
		{"bare", "delete", false, ""},
		{"unknown", "stop", false, ""},
	} {
		clear(owners)
		handled, err := p.Act(t.Context(), sbOf(c.name), c.action, "idle")
		if err != nil || handled != c.handled || (c.want != "" && !owners[c.want]) || (c.want == "" && len(owners) != 0) {
			t.Errorf("Act(%s, %s) = %v, %v; asked %v, want %q", c.name, c.action, handled, err, owners, c.want)
		}
	}
}

func TestExpired(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	obj := func(at, policy string) *unstructured.Unstructured {
		spec := map[string]any{}
		if at != "" {
			spec["shutdownTime"] = at
		}
		if policy != "" {
			spec["shutdownPolicy"] = policy
		}
		return &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	}
	for _, c := range []struct {
		at, policy string
		want       bool
	}{
		{"2026-01-01T11:59:59Z", "Delete", true},
		{"2026-01-01T12:00:00Z", "Delete", true},
		{"2026-01-01T12:00:01Z", "Delete", false},
		{"2026-01-01T11:00:00Z", "Retain", false}, // the object stays: so does the archive
		{"2026-01-01T11:00:00Z", "", false},
		{"", "Delete", false},
	} {
		if got := expired(obj(c.at, c.policy), now); got != c.want {
			t.Errorf("expired(%q, %q) = %v, want %v", c.at, c.policy, got, c.want)
		}
	}
}
