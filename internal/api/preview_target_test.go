package api

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/sdk"
)

// Two teams each have a sandbox named "app". A preview URL without an API
// key reaches team blue's by id or as "app--blue", never by the bare name,
// which stays team default's; a key reaches its own team's only.
func TestPreviewNamesCannotBeHijackedAcrossTeams(t *testing.T) {
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "sbx.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	if err := st.CreateTeam(ctx, &store.Team{ID: "blue"}); err != nil {
		t.Fatal(err)
	}
	for _, sb := range []*store.Sandbox{
		{ID: "sbx-blueapp", Name: "app", Team: "blue", State: sdk.StateStarted},
		{ID: "sbx-defaultapp", Name: "app", Team: auth.DefaultTeam, State: sdk.StateStarted},
		{ID: "sbx-blueonly", Name: "only", Team: "blue", State: sdk.StateStarted},
		{ID: "sbx-dashes", Name: "my--app", Team: "blue", State: sdk.StateStarted},
	} {
		if err := st.CreateSandbox(ctx, sb); err != nil {
			t.Fatal(err)
		}
	}
	blueKey := auth.WithPrincipal(ctx, auth.Principal{KeyID: "k", Team: "blue", Scopes: []auth.Scope{auth.ScopeSandboxesRead}})
	for _, c := range []struct {
		ctx  context.Context
		ref  string
		want string // "" for not found
	}{
		{ctx, "sbx-blueapp", "sbx-blueapp"},
		{ctx, "app--blue", "sbx-blueapp"},
		{ctx, "app", "sbx-defaultapp"},
		{ctx, "app--default", "sbx-defaultapp"},
		{ctx, "only", ""}, // blue's, by bare name: not without a key
		{ctx, "only--blue", "sbx-blueonly"},
		{ctx, "my--app--blue", "sbx-dashes"},
		{ctx, "app--nosuch", ""},
		{blueKey, "app", "sbx-blueapp"},
		{blueKey, "only", "sbx-blueonly"},
		{blueKey, "app--blue", "sbx-blueapp"},
		{blueKey, "app--default", ""},
		{blueKey, "sbx-defaultapp", ""},
	} {
		sb, err := previewSandbox(c.ctx, st.GetSandbox, c.ref)
		got := ""
		if err == nil {
			got = sb.ID
		}
		if got != c.want {
			t.Errorf("preview of %q (key: %t): %q %v, want %q", c.ref, c.ctx != ctx, got, err, c.want)
		}
	}
}
