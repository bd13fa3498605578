package store

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

func openTeamStore(t *testing.T) *SQLite {
	t.Helper()
	st, err := OpenSQLite(filepath.Join(t.TempDir(), "sbx.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func asTeam(team string) context.Context {
	return auth.WithPrincipal(auth.System(context.Background(), "test"), auth.Principal{KeyID: "k-" + team, Team: team, Scopes: []auth.Scope{auth.ScopeAdmin}})
}

func TestTeamsScopeSandboxes(t *testing.T) {
	st := openTeamStore(t)
	for _, team := range []string{"a", "b"} {
		if err := st.CreateTeam(auth.System(context.Background(), "test"), &Team{ID: team}); err != nil {
			t.Fatal(err)
		}
	}
	a, b := asTeam("a"), asTeam("b")
	sbA := &Sandbox{ID: "sbx-a", Name: "web", State: wire.StateStopped}
	if err := st.CreateSandbox(a, sbA); err != nil || sbA.Team != "a" {
		t.Fatalf("create in a: team %q, %v", sbA.Team, err)
	}
	// Names are unique per team: b may use the same name.
	if err := st.CreateSandbox(b, &Sandbox{ID: "sbx-b", Name: "web", State: wire.StateStopped}); err != nil {
		t.Fatalf("same name in another team: %v", err)
	}
	if err := st.CreateSandbox(a, &Sandbox{ID: "sbx-a2", Name: "web", State: wire.StateStopped}); errdefs.CodeOf(err) != wire.CodeNameTaken {
		t.Fatalf("same name in the same team: %v", err)
	}
	for _, ref := range []string{"sbx-a", "web"} {
		got, err := st.GetSandbox(b, ref)
		if ref == "sbx-a" && !errdefs.Is(err, errdefs.KindNotFound) {
			t.Fatalf("b got a's sandbox by id: %+v %v", got, err)
		}
		if ref == "web" && (err != nil || got.ID != "sbx-b") {
			t.Fatalf("b's web is %+v, %v", got, err)
		}
	}
	// b cannot change a's record either.
	sbA.State = wire.StateError
	if err := st.UpdateSandbox(b, sbA, &Event{State: wire.StateError}); !errdefs.Is(err, errdefs.KindNotFound) {
		t.Fatalf("b updated a's sandbox: %v", err)
	}
	if l, _ := st.ListSandboxes(b, Filter{}); len(l) != 1 || l[0].ID != "sbx-b" {
		t.Fatalf("b lists %v", l)
	}
	if l, _ := st.ListSandboxes(auth.System(context.Background(), "test"), Filter{}); len(l) != 2 {
		t.Fatalf("an internal caller lists %d sandboxes, want both teams'", len(l))
	}
	sbA.State = wire.StateStarting
	if err := st.UpdateSandbox(a, sbA, &Event{State: wire.StateStarting}); err != nil {
		t.Fatal(err)
	}
	if evs, _ := st.ListEvents(b, "", 0, 0); len(evs) != 0 {
		t.Fatalf("b sees a's events: %+v", evs)
	}
	if evs, _ := st.ListEvents(a, "", 0, 0); len(evs) != 1 || evs[0].Team != "a" {
		t.Fatalf("a's events: %+v", evs)
	}
	// Snapshots too.
	if err := st.CreateSnapshot(a, &Snapshot{Name: "snap", SandboxID: "sbx-a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetSnapshot(b, "", "snap"); !errdefs.Is(err, errdefs.KindNotFound) {
		t.Fatalf("b got a's snapshot: %v", err)
	}
	if err := st.DeleteSnapshot(b, "", "snap"); !errdefs.Is(err, errdefs.KindNotFound) {
		t.Fatalf("b deleted a's snapshot: %v", err)
	}
	if err := st.DeleteTeam(auth.System(context.Background(), "test"), "a"); errdefs.CodeOf(err) != wire.CodeTeamNotEmpty {
		t.Fatalf("deleted a team that owns sandboxes: %v", err)
	}
}

// TestQuotaUnderConcurrency: 20 creates at once against a quota of 5
// sandboxes: exactly 5 succeed, the others name the quota.
func TestQuotaUnderConcurrency(t *testing.T) {
	st := openTeamStore(t)
	if err := st.CreateTeam(auth.System(context.Background(), "test"), &Team{ID: "q", Quotas: wire.Quotas{MaxSandboxes: 5}}); err != nil {
		t.Fatal(err)
	}
	ctx := asTeam("q")
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = st.CreateSandbox(ctx, &Sandbox{ID: fmt.Sprintf("sbx-%d", i), State: wire.StateCreating, Spec: Spec{CPU: 1, MemoryMiB: 256}})
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errdefs.CodeOf(err) != wire.CodeQuotaSandboxes || !errdefs.Is(err, errdefs.KindForbidden):
			t.Fatalf("refused with %v, want QUOTA_SANDBOXES", err)
		}
	}
	if ok != 5 {
		t.Fatalf("%d creates succeeded against a quota of 5", ok)
	}
	u, err := st.Usage(auth.System(context.Background(), "test"), "q")
	if err != nil || u.Sandboxes != 5 || u.CPU != 5 || u.MemoryMiB != 1280 {
		t.Fatalf("usage %+v, %v", u, err)
	}
	// Memory quota names itself.
	if err := st.SetQuotas(auth.System(context.Background(), "test"), "q", wire.Quotas{MemoryMiB: 1400}); err != nil {
		t.Fatal(err)
	}
	err = st.CreateSandbox(ctx, &Sandbox{ID: "sbx-big", State: wire.StateCreating, Spec: Spec{MemoryMiB: 256}})
	if errdefs.CodeOf(err) != wire.CodeQuotaMemory {
		t.Fatalf("over the memory quota: %v", err)
	}
}

// TestTeamsScopeImages: a team sees its own images and team default's,
// replaces or deletes only its own, and cannot take another team's name.
func TestTeamsScopeImages(t *testing.T) {
	st := openTeamStore(t)
	ctx := auth.System(context.Background(), "test")
	for _, team := range []string{"a", "b"} {
		if err := st.CreateTeam(ctx, &Team{ID: team}); err != nil {
			t.Fatal(err)
		}
	}
	a, b := asTeam("a"), asTeam("b")
	if err := st.PutImage(ctx, &Image{Name: "base", ID: "sha256:1"}); err != nil { // internal: default
		t.Fatal(err)
	}
	if err := st.PutImage(a, &Image{Name: "a-img", ID: "sha256:2"}); err != nil {
		t.Fatal(err)
	}
	if img, err := st.GetImage(b, "base"); err != nil || img.Team != auth.DefaultTeam {
		t.Fatalf("b cannot see the default team's image: %+v %v", img, err)
	}
	if _, err := st.GetImage(b, "a-img"); !errdefs.Is(err, errdefs.KindNotFound) {
		t.Fatalf("b sees a's image: %v", err)
	}
	if l, _ := st.ListImages(b); len(l) != 1 || l[0].Name != "base" {
		t.Fatalf("b lists %+v", l)
	}
	if err := st.DeleteImage(b, "base"); !errdefs.Is(err, errdefs.KindNotFound) {
		t.Fatalf("b deleted the default team's image: %v", err)
	}
	// Names are per team: b's own a-img and base are b's, a's and the
	// default team's stay as they were.
	if err := st.PutImage(b, &Image{Name: "a-img", ID: "sha256:b1"}); err != nil {
		t.Fatalf("b's own a-img: %v", err)
	}
	if err := st.PutImage(b, &Image{Name: "base", ID: "sha256:b2"}); err != nil {
		t.Fatalf("b's own base: %v", err)
	}
	if img, err := st.GetImage(b, "base"); err != nil || img.ID != "sha256:b2" || img.Team != "b" {
		t.Fatalf("b's base: %+v %v", img, err)
	}
	if img, err := st.GetImage(a, "base"); err != nil || img.ID != "sha256:1" {
		t.Fatalf("a's view of base after b made its own: %+v %v", img, err)
	}
	if err := st.DeleteImage(b, "a-img"); err != nil {
		t.Fatal(err)
	}
	if img, err := st.GetImage(a, "a-img"); err != nil || img.ID != "sha256:2" {
		t.Fatalf("a's image after b's: %+v %v", img, err)
	}
	if err := st.PutImage(a, &Image{Name: "a-img", ID: "sha256:3"}); err != nil {
		t.Fatalf("a cannot replace its own image: %v", err)
	}
}

// Under a disk quota every byte counts: a sandbox without diskMiB is
// refused, and what the team holds outside the store (volumes, backups)
// counts in the usage and in every check.
func TestDiskQuotaCountsEverything(t *testing.T) {
	st := openTeamStore(t)
	ctx := context.Background()
	if err := st.CreateTeam(ctx, &Team{ID: "d", Quotas: wire.Quotas{DiskMiB: 100}}); err != nil {
		t.Fatal(err)
	}
	d := asTeam("d")
	err := st.CreateSandbox(d, &Sandbox{ID: "sbx-unbounded", State: wire.StateStopped, Spec: Spec{CPU: 1}})
	if errdefs.CodeOf(err) != wire.CodeQuotaDisk || !strings.Contains(err.Error(), "diskMiB") {
		t.Fatalf("a sandbox without diskMiB: %v, want QUOTA_DISK naming diskMiB", err)
	}
	outside := 70
	st.SetDiskOutside(func(team string) (int, error) {
		if team != "d" {
			return 0, nil
		}
		return outside, nil
	})
	if err := st.CreateSandbox(d, &Sandbox{ID: "sbx-big", State: wire.StateStopped, Spec: Spec{DiskMiB: 40}}); errdefs.CodeOf(err) != wire.CodeQuotaDisk {
		t.Fatalf("40 MiB on top of 70 outside: %v, want QUOTA_DISK", err)
	}
	if err := st.CreateSandbox(d, &Sandbox{ID: "sbx-ok", State: wire.StateStopped, Spec: Spec{DiskMiB: 20}}); err != nil {
		t.Fatal(err)
	}
	if u, err := st.Usage(ctx, "d"); err != nil || u.DiskMiB != 90 {
		t.Fatalf("usage: %+v, %v, want diskMiB 90", u, err)
	}
	if err := st.CheckDisk(ctx, "d", 11); errdefs.CodeOf(err) != wire.CodeQuotaDisk {
		t.Errorf("CheckDisk 11 MiB more: %v", err)
	}
	if err := st.CheckDisk(ctx, "d", 10); err != nil {
		t.Errorf("CheckDisk 10 MiB more: %v", err)
	}
	if err := st.CheckDisk(ctx, auth.DefaultTeam, 1<<20); err != nil {
		t.Errorf("a team without a disk quota: %v", err)
	}
}
