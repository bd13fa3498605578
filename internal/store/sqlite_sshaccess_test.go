package store_test

import (
	"context"
	"github.com/sbxhq/sbx/internal/auth"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

func TestSSHAccessRoundTrip(t *testing.T) {
	s, _ := openTemp(t)
	ctx := auth.System(context.Background(), "test")
	if err := s.CreateSandbox(ctx, &store.Sandbox{ID: "sbx-a", State: "started"}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tok := &store.SSHAccess{ID: "ssh-1", SandboxID: "sbx-a", TokenHash: "abc", Team: "t", CreatedBy: "k", Scopes: []string{"a", "b"}, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	key := &store.SSHAccess{ID: "ssh-2", SandboxID: "sbx-a", PublicKey: "ssh-ed25519 AAAA", CreatedAt: t0.Add(time.Second)}
	for _, a := range []*store.SSHAccess{tok, key} {
		if err := s.CreateSSHAccess(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.SSHAccessByTokenHash(ctx, "abc")
	if err != nil || got.ID != "ssh-1" || got.Team != "t" || got.CreatedBy != "k" || len(got.Scopes) != 2 || !got.ExpiresAt.Equal(tok.ExpiresAt) {
		t.Fatalf("by hash: %+v %v", got, err)
	}
	if _, err := s.SSHAccessByTokenHash(ctx, "nope"); errdefs.CodeOf(err) != wire.CodeSSHAccessNotFound {
		t.Fatalf("unknown hash: %v", err)
	}
	if err := s.CreateSSHAccess(ctx, &store.SSHAccess{ID: "ssh-3", SandboxID: "sbx-x", TokenHash: "def"}); errdefs.CodeOf(err) != wire.CodeSandboxNotFound {
		t.Fatalf("unknown sandbox: %v", err)
	}
	if err := s.CreateSSHAccess(ctx, &store.SSHAccess{ID: "ssh-4", SandboxID: "sbx-a"}); errdefs.KindOf(err) != errdefs.KindInvalid {
		t.Fatalf("neither token nor key: %v", err)
	}
	list, _ := s.ListSSHAccess(ctx, "sbx-a")
	if len(list) != 2 || list[0].ID != "ssh-1" || list[1].PublicKey == "" {
		t.Fatalf("list %+v", list)
	}
	if n, _ := s.DeleteExpiredSSHAccess(ctx, t0.Add(2*time.Hour)); n != 1 {
		t.Fatalf("expired deleted: %d, want the token only (the key never expires)", n)
	}
	if err := s.DeleteSSHAccess(ctx, "sbx-a", "ssh-1"); errdefs.CodeOf(err) != wire.CodeSSHAccessNotFound {
		t.Fatalf("delete a deleted one: %v", err)
	}
	if err := s.DeleteSandbox(ctx, "sbx-a"); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.ListSSHAccess(ctx, "sbx-a"); len(list) != 0 {
		t.Fatalf("deleting the sandbox left %+v", list)
	}
}
