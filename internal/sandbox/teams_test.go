package sandbox

import (
	"context"
	"testing"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// TestUsageChecksSeeEveryTeam: a key of another team must not free layers
// or an image that some team's sandbox still uses, though it cannot see
// that sandbox.
func TestUsageChecksSeeEveryTeam(t *testing.T) {
	m, _, st := newFakeManager(t)
	ts := st.(store.TeamStore)
	for _, team := range []string{"a", "b"} {
		if err := ts.CreateTeam(context.Background(), &store.Team{ID: team}); err != nil {
			t.Fatal(err)
		}
	}
	ctxA := auth.WithPrincipal(context.Background(), auth.Principal{KeyID: "ka", Team: "a"})
	ctxB := auth.WithPrincipal(context.Background(), auth.Principal{KeyID: "kb", Team: "b"})
	if err := st.CreateSandbox(ctxA, &store.Sandbox{ID: "sbx-a", State: wire.StateStopped, Spec: store.Spec{Image: "base", Layers: []string{"sha256:l"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Get(ctxB, "sbx-a"); err == nil {
		t.Fatal("team b sees team a's sandbox")
	}
	if used, err := m.UsesLayers(ctxB, []string{"sha256:l"}); err != nil || !used {
		t.Fatalf("UsesLayers for team b: %v, %v; want team a's use to count", used, err)
	}
	if sb, err := m.UsesImage(ctxB, auth.DefaultTeam, "base"); err != nil || sb == nil {
		t.Fatalf("UsesImage of default's base for team b: %v, %v; want team a's sandbox", sb, err)
	}
	// Image names are per team: b's own "base" is not what a's sandbox uses.
	if sb, err := m.UsesImage(ctxB, "b", "base"); err != nil || sb != nil {
		t.Fatalf("UsesImage of b's base: %v, %v; want none", sb, err)
	}
}
