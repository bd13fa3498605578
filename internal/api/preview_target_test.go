package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/auth/keys/keystest"
	"github.com/sbxhq/sbx/internal/network"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
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
	ctx := auth.System(context.Background(), "a preview without a key: its token decides")
	if err := st.CreateTeam(ctx, &store.Team{ID: "blue"}); err != nil {
		t.Fatal(err)
	}
	for _, sb := range []*store.Sandbox{
		{ID: "sbx-blueapp", Name: "app", Team: "blue", State: wire.StateStarted},
		{ID: "sbx-defaultapp", Name: "app", Team: auth.DefaultTeam, State: wire.StateStarted},
		{ID: "sbx-blueonly", Name: "only", Team: "blue", State: wire.StateStarted},
		{ID: "sbx-dashes", Name: "my--app", Team: "blue", State: wire.StateStarted},
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

// A port's token, its signed URLs and the cookies they set die with the
// API key that exposed the port.
func TestPreviewTokenDiesWithItsKey(t *testing.T) {
	dir := t.TempDir()
	st, err := store.OpenSQLite(filepath.Join(dir, "sbx.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := auth.System(context.Background(), "a preview without a key: its token decides")
	if err := st.CreateSandbox(ctx, &store.Sandbox{ID: "sbx-1", State: wire.StateStarted}); err != nil {
		t.Fatal(err)
	}
	pv, err := network.NewPreviews(st, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	svc := keystest.New(t)
	pv.SetKeys(svc)
	p, _ := keystest.Key(t, svc, wire.ScopeSandboxesWrite)
	rec, err := pv.Expose(auth.WithPrincipal(ctx, p), "sbx-1", 8080, false)
	if err != nil || rec.CreatedBy != p.KeyID {
		t.Fatalf("expose: %+v %v, want it made by key %s", rec, err, p.KeyID)
	}
	if rec, err = pv.Get(ctx, "sbx-1", 8080); err != nil || rec.CreatedBy != p.KeyID {
		t.Fatalf("stored port: %+v %v", rec, err)
	}
	s := New(&fakeSandboxes{}, fakeImages{}, svc)
	exp := time.Now().Add(time.Hour).Unix()
	sig := pv.Sign(rec, time.Unix(exp, 0))
	requests := map[string]func() *http.Request{
		"token header": func() *http.Request {
			r := httptest.NewRequest("GET", "/", nil)
			r.Header.Set(network.TokenHeader, rec.Token)
			return r
		},
		"token query": func() *http.Request { return httptest.NewRequest("GET", "/?"+network.TokenParam+"="+rec.Token, nil) },
		"signed URL": func() *http.Request {
			return httptest.NewRequest("GET", fmt.Sprintf("/?%s=%d&%s=%s", network.ExpiresParam, exp, network.SigParam, sig), nil)
		},
		"cookie": func() *http.Request {
			r := httptest.NewRequest("GET", "/", nil)
			r.AddCookie(&http.Cookie{Name: network.CookieName, Value: rec.Token})
			return r
		},
	}
	for what, req := range requests {
		if _, by, ok := s.authorizePreview(req(), pv, rec); !ok || by == nil || by.KeyID != p.KeyID {
			t.Fatalf("%s of a live key: ok %v, acting for %+v; want key %s", what, ok, by, p.KeyID)
		}
	}
	keystest.Revoke(t, svc, p)
	for what, req := range requests {
		if _, _, ok := s.authorizePreview(req(), pv, rec); ok {
			t.Errorf("%s of a revoked key still opens the port", what)
		}
	}
	// Exposing it again with a live key gives a new token, of that key.
	q, _ := keystest.Key(t, svc, wire.ScopeSandboxesWrite)
	again, err := pv.Expose(auth.WithPrincipal(ctx, q), "sbx-1", 8080, false)
	if err != nil || again.CreatedBy != q.KeyID || again.Token == rec.Token {
		t.Fatalf("expose again: %+v %v, want a new token of key %s", again, err, q.KeyID)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set(network.TokenHeader, again.Token)
	if _, _, ok := s.authorizePreview(r, pv, again); !ok {
		t.Fatal("the new token is refused")
	}
	if link, err := pv.Link(auth.WithPrincipal(ctx, q), "sbx-1", 8080); err != nil || link.Token != again.Token {
		t.Fatalf("link: %+v %v, want the live token", link, err)
	}
}
