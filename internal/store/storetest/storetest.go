// Package storetest checks that a store.Store keeps the contract of the
// interface. Every implementation runs it from its own tests:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return openFresh(t) })
//	}
package storetest

import (
	"context"
	"fmt"
	"github.com/sbxhq/sbx/internal/auth"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Run runs every check as a subtest. open must return an empty store that
// is closed when the subtest ends.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(*testing.T, store.Store)
	}{
		{"SandboxRoundTrip", testSandboxRoundTrip},
		{"CreateSetsTimes", testCreateSetsTimes},
		{"GetMissing", testGetMissing},
		{"IDBeforeName", testIDBeforeName},
		{"Uniqueness", testUniqueness},
		{"ConcurrentSameName", testConcurrentSameName},
		{"ConcurrentWriters", testConcurrentWriters},
		{"ListFilter", testListFilter},
		{"Update", testUpdate},
		{"UpdateMissing", testUpdateMissing},
		{"UpdateNameTaken", testUpdateNameTaken},
		{"Events", testEvents},
		{"Delete", testDelete},
		{"Images", testImages},
		{"Deadlines", testDeadlines},
		{"AppendEvent", testAppendEvent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open(t)) })
	}
}

// at returns a time with nanoseconds in a zone other than UTC, to catch
// stores that truncate or mangle times.
func at(minute int) time.Time {
	return time.Date(2025, 3, 4, 5, minute, 7, 123456789, time.FixedZone("X", 3600))
}

func fullSandbox(id, name string) *store.Sandbox {
	return &store.Sandbox{
		ID:     id,
		Name:   name,
		State:  "running",
		Reason: "started",
		Error:  "none",
		Spec: store.Spec{
			Image:   "alpine:3",
			ImageID: "sha256:aa",
			Layers:  []string{"sha256:l1", "sha256:l2"},
			ImageConfig: store.ImageConfig{
				Env:        []string{"PATH=/bin"},
				Entrypoint: []string{"/bin/sh"},
				Cmd:        []string{"-c", "true"},
				WorkingDir: "/w",
				User:       "1000:1000",
			},
			Env:       map[string]string{"A": "1"},
			Labels:    map[string]string{"team": "x"},
			CPU:       1.5,
			MemoryMiB: 512,
			PidsLimit: 100,
			Workdir:   "/work",
		},
		CreatedAt:      at(1),
		StartedAt:      at(2),
		StoppedAt:      at(3),
		LastActivityAt: at(4),
		ExpiresAt:      at(5),
		ExpiresAction:  "stop",
	}
}

// equalSandbox reports the first difference between two records.
func equalSandbox(got, want *store.Sandbox) error {
	g, w := *got, *want
	for _, p := range []struct {
		name string
		g, w time.Time
	}{
		{"CreatedAt", g.CreatedAt, w.CreatedAt},
		{"UpdatedAt", g.UpdatedAt, w.UpdatedAt},
		{"StartedAt", g.StartedAt, w.StartedAt},
		{"StoppedAt", g.StoppedAt, w.StoppedAt},
		{"LastActivityAt", g.LastActivityAt, w.LastActivityAt},
		{"ExpiresAt", g.ExpiresAt, w.ExpiresAt},
	} {
		if !p.g.Equal(p.w) {
			return fmt.Errorf("%s = %v, want %v", p.name, p.g, p.w)
		}
	}
	g.CreatedAt, g.UpdatedAt, g.StartedAt, g.StoppedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	w.CreatedAt, w.UpdatedAt, w.StartedAt, w.StoppedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	g.LastActivityAt, g.ExpiresAt, w.LastActivityAt, w.ExpiresAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if !reflect.DeepEqual(g, w) {
		return fmt.Errorf("got %+v\nwant %+v", g, w)
	}
	return nil
}

func mustCreate(t *testing.T, s store.Store, sb *store.Sandbox) {
	t.Helper()
	if err := s.CreateSandbox(auth.System(context.Background(), "test"), sb); err != nil {
		t.Fatalf("CreateSandbox(%s): %v", sb.ID, err)
	}
}

func mustGet(t *testing.T, s store.Store, idOrName string) *store.Sandbox {
	t.Helper()
	sb, err := s.GetSandbox(auth.System(context.Background(), "test"), idOrName)
	if err != nil {
		t.Fatalf("GetSandbox(%q): %v", idOrName, err)
	}
	return sb
}

// wantCode fails unless err is an errdefs error of kind k and code.
func wantCode(t *testing.T, err error, k errdefs.Kind, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", code)
	}
	if errdefs.KindOf(err) != k || string(errdefs.CodeOf(err)) != code {
		t.Fatalf("got %v (kind %d, code %s), want kind %d, code %s", err, errdefs.KindOf(err), errdefs.CodeOf(err), k, code)
	}
}

func testSandboxRoundTrip(t *testing.T, s store.Store) {
	want := fullSandbox("sbx-1", "one")
	mustCreate(t, s, want)
	for _, key := range []string{"sbx-1", "one"} {
		if err := equalSandbox(mustGet(t, s, key), want); err != nil {
			t.Errorf("GetSandbox(%q): %v", key, err)
		}
	}

	// Zero times and empty collections come back as they went in.
	bare := &store.Sandbox{ID: "sbx-2", State: "created"}
	mustCreate(t, s, bare)
	got := mustGet(t, s, "sbx-2")
	if err := equalSandbox(got, bare); err != nil {
		t.Error(err)
	}
	if !got.StartedAt.IsZero() || !got.StoppedAt.IsZero() {
		t.Errorf("zero times came back as %v, %v", got.StartedAt, got.StoppedAt)
	}
}

func testCreateSetsTimes(t *testing.T, s store.Store) {
	before := time.Now()
	sb := &store.Sandbox{ID: "sbx-1", State: "created"}
	mustCreate(t, s, sb)
	if sb.CreatedAt.Before(before.Add(-time.Second)) || sb.UpdatedAt.IsZero() {
		t.Fatalf("CreatedAt %v, UpdatedAt %v not set", sb.CreatedAt, sb.UpdatedAt)
	}
	if err := equalSandbox(mustGet(t, s, "sbx-1"), sb); err != nil {
		t.Error(err)
	}
}

func testGetMissing(t *testing.T, s store.Store) {
	_, err := s.GetSandbox(auth.System(context.Background(), "test"), "nope")
	wantCode(t, err, errdefs.KindNotFound, "SANDBOX_NOT_FOUND")
	_, err = s.GetSandbox(auth.System(context.Background(), "test"), "")
	wantCode(t, err, errdefs.KindNotFound, "SANDBOX_NOT_FOUND")
}

func testIDBeforeName(t *testing.T, s store.Store) {
	mustCreate(t, s, &store.Sandbox{ID: "sbx-b", Name: "sbx-a", State: "created"})
	mustCreate(t, s, &store.Sandbox{ID: "sbx-a", State: "created"})
	if got := mustGet(t, s, "sbx-a"); got.ID != "sbx-a" {
		t.Fatalf("GetSandbox(sbx-a) found %s, want the sandbox with that id", got.ID)
	}
}

func testUniqueness(t *testing.T, s store.Store) {
	ctx := auth.System(context.Background(), "test")
	mustCreate(t, s, &store.Sandbox{ID: "sbx-1", State: "created"})
	mustCreate(t, s, &store.Sandbox{ID: "sbx-2", State: "created"}) // two unnamed are fine
	mustCreate(t, s, &store.Sandbox{ID: "sbx-3", Name: "web", State: "created"})

	err := s.CreateSandbox(ctx, &store.Sandbox{ID: "sbx-4", Name: "web", State: "created"})
	wantCode(t, err, errdefs.KindConflict, "NAME_TAKEN")
	if want := `a sandbox named "web" already exists; pick another name or use PUT /v1/sandboxes/{name} to get it`; err.Error() != want {
		t.Errorf("message %q, want %q", err.Error(), want)
	}
	err = s.CreateSandbox(ctx, &store.Sandbox{ID: "sbx-1", Name: "other", State: "created"})
	wantCode(t, err, errdefs.KindConflict, "ID_TAKEN")

	// The failed creates left nothing behind.
	if _, err := s.GetSandbox(ctx, "sbx-4"); !errdefs.Is(err, errdefs.KindNotFound) {
		t.Errorf("sbx-4 exists after a failed create: %v", err)
	}
	if _, err := s.GetSandbox(ctx, "other"); !errdefs.Is(err, errdefs.KindNotFound) {
		t.Errorf("name other exists after a failed create: %v", err)
	}
	if got := mustGet(t, s, "sbx-1"); got.Name != "" {
		t.Errorf("sbx-1 name = %q after a failed create, want empty", got.Name)
	}
}

func testConcurrentSameName(t *testing.T, s store.Store) {
	const n = 20
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = s.CreateSandbox(auth.System(context.Background(), "test"),
				&store.Sandbox{ID: fmt.Sprintf("sbx-%d", i), Name: "same", State: "created"})
		})
	}
	wg.Wait()
	ok := 0
	for i, err := range errs {
		if err == nil {
			ok++
			continue
		}
		if errdefs.CodeOf(err) != wire.CodeNameTaken {
			t.Errorf("create %d: %v, want NAME_TAKEN", i, err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d creates succeeded, want exactly 1", ok)
	}
}

// testConcurrentWriters has many goroutines write and read at once; none may
// see an error (such as a busy database).
func testConcurrentWriters(t *testing.T, s store.Store) {
	const n, updates = 20, 10
	ctx := auth.System(context.Background(), "test")
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			sb := &store.Sandbox{ID: fmt.Sprintf("sbx-%d", i), Name: fmt.Sprintf("n%d", i), State: "created"}
			if err := s.CreateSandbox(ctx, sb); err != nil {
				errs <- err
				return
			}
			for j := range updates {
				sb.Reason = fmt.Sprint(j)
				if err := s.UpdateSandbox(ctx, sb, &store.Event{State: "running", Reason: sb.Reason}); err != nil {
					errs <- err
					return
				}
				if _, err := s.ListSandboxes(ctx, store.Filter{}); err != nil {
					errs <- err
					return
				}
				if _, err := s.ListEvents(ctx, sb.ID, 0, 0); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	evs, err := s.ListEvents(ctx, "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != n*updates {
		t.Fatalf("%d events, want %d", len(evs), n*updates)
	}
}

func ids(sbs []*store.Sandbox) []string {
	out := []string{}
	for _, sb := range sbs {
		out = append(out, sb.ID)
	}
	return out
}

func testListFilter(t *testing.T, s store.Store) {
	ctx := auth.System(context.Background(), "test")
	add := func(id, state string, minute int, labels map[string]string) {
		sb := &store.Sandbox{ID: id, State: wire.State(state), CreatedAt: at(minute)}
		sb.Spec.Labels = labels
		mustCreate(t, s, sb)
	}
	// Creation order differs from id order; sbx-1 and sbx-2 share a
	// creation time, so id decides between them.
	add("sbx-2", "running", 3, map[string]string{"team": "a", "env": "prod"})
	add("sbx-4", "stopped", 1, map[string]string{"team": "a"})
	add("sbx-1", "running", 3, nil)
	add("sbx-3", "running", 2, map[string]string{"team": "b", "env": "prod"})

	for _, tc := range []struct {
		f    store.Filter
		want []string
	}{
		{store.Filter{}, []string{"sbx-4", "sbx-3", "sbx-1", "sbx-2"}},
		{store.Filter{State: "running"}, []string{"sbx-3", "sbx-1", "sbx-2"}},
		{store.Filter{State: "paused"}, []string{}},
		{store.Filter{Labels: map[string]string{"team": "a"}}, []string{"sbx-4", "sbx-2"}},
		{store.Filter{Labels: map[string]string{"team": "a", "env": "prod"}}, []string{"sbx-2"}},
		{store.Filter{State: "stopped", Labels: map[string]string{"env": "prod"}}, []string{}},
		{store.Filter{Labels: map[string]string{"team": ""}}, []string{}},
	} {
		got, err := s.ListSandboxes(ctx, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ids(got), tc.want) {
			t.Errorf("ListSandboxes(%+v) = %v, want %v", tc.f, ids(got), tc.want)
		}
	}
}

func testUpdate(t *testing.T, s store.Store) {
	ctx := auth.System(context.Background(), "test")
	sb := fullSandbox("sbx-1", "one")
	mustCreate(t, s, sb)
	created := sb.UpdatedAt

	sb.Name = "two"
	sb.State, sb.Reason, sb.Error = "error", "crashed", "exit 1"
	sb.Spec.Labels = map[string]string{"k": "v"}
	sb.StoppedAt = at(9)
	ev := &store.Event{State: "error", Reason: "crashed", Message: "exit 1"}
	if err := s.UpdateSandbox(ctx, sb, ev); err != nil {
		t.Fatal(err)
	}
	if sb.UpdatedAt.Before(created) {
		t.Errorf("UpdatedAt went back: %v < %v", sb.UpdatedAt, created)
	}
	if ev.Seq <= 0 || ev.SandboxID != "sbx-1" || ev.Time.IsZero() {
		t.Errorf("event not filled in: %+v", ev)
	}
	if err := equalSandbox(mustGet(t, s, "two"), sb); err != nil {
		t.Error(err)
	}
	if _, err := s.GetSandbox(ctx, "one"); !errdefs.Is(err, errdefs.KindNotFound) {
		t.Errorf("old name still finds the sandbox: %v", err)
	}
	evs, err := s.ListEvents(ctx, "sbx-1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Seq != ev.Seq || !evs[0].Time.Equal(ev.Time) ||
		evs[0].State != "error" || evs[0].Reason != "crashed" || evs[0].Message != "exit 1" {
		t.Errorf("events = %+v, want [%+v]", evs, *ev)
	}

	// An update without an event appends none; clearing the name frees it.
	sb.Name = ""
	if err := s.UpdateSandbox(ctx, sb, nil); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, &store.Sandbox{ID: "sbx-2", Name: "two", State: "created"})
	if evs, _ := s.ListEvents(ctx, "", 0, 0); len(evs) != 1 {
		t.Errorf("%d events after an update without one, want 1", len(evs))
	}

	// An event's own time is kept.
	ev = &store.Event{Time: at(30), State: "stopped"}
	if err := s.UpdateSandbox(ctx, sb, ev); err != nil {
		t.Fatal(err)
	}
	evs, _ = s.ListEvents(ctx, "sbx-1", ev.Seq-1, 1)
	if len(evs) != 1 || !evs[0].Time.Equal(at(30)) {
		t.Errorf("event time not kept: %+v", evs)
	}
}

func testUpdateMissing(t *testing.T, s store.Store) {
	ctx := auth.System(context.Background(), "test")
	sb := &store.Sandbox{ID: "sbx-x", State: "running"}
	ev := &store.Event{State: "running"}
	wantCode(t, s.UpdateSandbox(ctx, sb, ev), errdefs.KindNotFound, "SANDBOX_NOT_FOUND")
	if !sb.UpdatedAt.IsZero() || ev.Seq != 0 {
		t.Errorf("failed update changed its arguments: %+v %+v", sb, ev)
	}
	if evs, err := s.ListEvents(ctx, "", 0, 0); err != nil || len(evs) != 0 {
		t.Errorf("events after a failed update: %v, %v", evs, err)
	}
}

func testUpdateNameTaken(t *testing.T, s store.Store) {
	ctx := auth.System(context.Background(), "test")
	mustCreate(t, s, &store.Sandbox{ID: "sbx-1", Name: "a", State: "created"})
	sb := &store.Sandbox{ID: "sbx-2", Name: "b", State: "created"}
	mustCreate(t, s, sb)
	sb.Name, sb.State = "a", "running"
	err := s.UpdateSandbox(ctx, sb, &store.Event{State: "running"})
	wantCode(t, err, errdefs.KindConflict, "NAME_TAKEN")
	if got := mustGet(t, s, "sbx-2"); got.Name != "b" || got.State != "created" {
		t.Errorf("failed update changed the record: %+v", got)
	}
	if evs, _ := s.ListEvents(ctx, "", 0, 0); len(evs) != 0 {
		t.Errorf("failed update appended events: %+v", evs)
	}
}

func testEvents(t *testing.T, s store.Store) {
	ctx := auth.System(context.Background(), "test")
	a := &store.Sandbox{ID: "sbx-a", State: "created"}
	b := &store.Sandbox{ID: "sbx-b", State: "created"}
	mustCreate(t, s, a)
	mustCreate(t, s, b)
	var seqA, seqAll []int64
	for i := range 6 {
		sb := a
		if i%3 == 2 {
			sb = b
		}
		ev := &store.Event{State: "running", Message: fmt.Sprint(i)}
		if err := s.UpdateSandbox(ctx, sb, ev); err != nil {
			t.Fatal(err)
		}
		if len(seqAll) > 0 && ev.Seq <= seqAll[len(seqAll)-1] {
			t.Fatalf("seq %d after %d: not increasing", ev.Seq, seqAll[len(seqAll)-1])
		}
		seqAll = append(seqAll, ev.Seq)
		if sb == a {
			seqA = append(seqA, ev.Seq)
		}
	}
	seqs := func(id string, after int64, limit int) []int64 {
		t.Helper()
		evs, err := s.ListEvents(ctx, id, after, limit)
		if err != nil {
			t.Fatal(err)
		}
		out := []int64{}
		for _, e := range evs {
			if id != "" && e.SandboxID != id {
				t.Errorf("event of %s in the list of %s", e.SandboxID, id)
			}
			out = append(out, e.Seq)
		}
		return out
	}
	for _, tc := range []struct {
		id    string
		after int64
		limit int
		want  []int64
	}{
		{"", 0, 0, seqAll},
		{"", seqAll[1], 0, seqAll[2:]},
		{"", seqAll[1], 2, seqAll[2:4]},
		{"sbx-a", 0, 0, seqA},
		{"sbx-a", seqA[1], 0, seqA[2:]},
		{"sbx-a", 0, 1, seqA[:1]},
		{"sbx-a", seqAll[5], 0, []int64{}},
		{"sbx-none", 0, 0, []int64{}},
	} {
		if got := seqs(tc.id, tc.after, tc.limit); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ListEvents(%q, %d, %d) = %v, want %v", tc.id, tc.after, tc.limit, got, tc.want)
		}
	}
}

func testDelete(t *testing.T, s store.Store) {
	ctx := auth.System(context.Background(), "test")
	sb := &store.Sandbox{ID: "sbx-1", Name: "web", State: "created"}
	mustCreate(t, s, sb)
	mustCreate(t, s, &store.Sandbox{ID: "sbx-2", State: "created"})
	if err := s.UpdateSandbox(ctx, sb, &store.Event{State: "running"}); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateSandbox(ctx, &store.Sandbox{ID: "sbx-2", State: "running"}, &store.Event{State: "running"}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSandbox(ctx, "sbx-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetSandbox(ctx, "sbx-1"); !errdefs.Is(err, errdefs.KindNotFound) {
		t.Errorf("deleted sandbox found: %v", err)
	}
	evs, err := s.ListEvents(ctx, "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].SandboxID != "sbx-2" {
		t.Errorf("events after delete = %+v, want only sbx-2's", evs)
	}
	if err := s.DeleteSandbox(ctx, "sbx-1"); err != nil {
		t.Errorf("deleting a missing sandbox: %v", err)
	}
	mustCreate(t, s, &store.Sandbox{ID: "sbx-3", Name: "web", State: "created"}) // the name is free again
}

func testImages(t *testing.T, s store.Store) {
	ctx := auth.System(context.Background(), "test")
	img := &store.Image{
		Name:      "alpine:3",
		ID:        "sha256:aa",
		Layers:    []string{"sha256:l1", "sha256:l2"},
		Config:    store.ImageConfig{Env: []string{"PATH=/bin"}, Cmd: []string{"/bin/sh"}, WorkingDir: "/", User: "root"},
		Source:    "docker.io/library/alpine:3",
		SizeBytes: 1 << 40,
		CreatedAt: at(5),
	}
	if err := s.PutImage(ctx, img); err != nil {
		t.Fatal(err)
	}
	equal := func(got, want *store.Image) {
		t.Helper()
		g, w := *got, *want
		if !g.CreatedAt.Equal(w.CreatedAt) {
			t.Errorf("CreatedAt = %v, want %v", g.CreatedAt, w.CreatedAt)
		}
		g.CreatedAt, w.CreatedAt = time.Time{}, time.Time{}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("got %+v\nwant %+v", g, w)
		}
	}
	got, err := s.GetImage(ctx, "alpine:3")
	if err != nil {
		t.Fatal(err)
	}
	equal(got, img)

	// Put replaces, and fills in a zero CreatedAt.
	img2 := &store.Image{Name: "alpine:3", ID: "sha256:bb", Layers: []string{"sha256:l3"}}
	if err := s.PutImage(ctx, img2); err != nil {
		t.Fatal(err)
	}
	if img2.CreatedAt.IsZero() {
		t.Error("PutImage left CreatedAt zero")
	}
	if err := s.PutImage(ctx, &store.Image{Name: "busybox", ID: "sha256:cc", Layers: []string{"sha256:l4"}, CreatedAt: at(1)}); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListImages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != "alpine:3" || list[1].Name != "busybox" {
		t.Fatalf("ListImages = %+v, want alpine:3 then busybox", list)
	}
	equal(list[0], img2)

	if err := s.DeleteImage(ctx, "alpine:3"); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetImage(ctx, "alpine:3")
	wantCode(t, err, errdefs.KindNotFound, "IMAGE_NOT_FOUND")
	if want := `image "alpine:3" not found; list images with "sbx image ls"`; err.Error() != want {
		t.Errorf("message %q, want %q", err.Error(), want)
	}
	wantCode(t, s.DeleteImage(ctx, "alpine:3"), errdefs.KindNotFound, "IMAGE_NOT_FOUND")
}

func testDeadlines(t *testing.T, s store.Store) {
	ctx := auth.System(context.Background(), "test")
	for i, id := range []string{"sbx-1", "sbx-2", "sbx-3", "sbx-4"} {
		sb := &store.Sandbox{ID: id, State: "started"}
		if i < 3 {
			// sbx-3 is due first, then sbx-2, then sbx-1; sbx-4 has no deadline.
			sb.ExpiresAt, sb.ExpiresAction = at(30-10*i), "stop"
		}
		mustCreate(t, s, sb)
	}
	ids := func(limit int) []string {
		t.Helper()
		list, err := s.ListExpiring(ctx, limit)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, sb := range list {
			out = append(out, sb.ID)
		}
		return out
	}
	if got := ids(0); !reflect.DeepEqual(got, []string{"sbx-3", "sbx-2", "sbx-1"}) {
		t.Errorf("ListExpiring = %v, want soonest first without sbx-4", got)
	}
	if got := ids(2); !reflect.DeepEqual(got, []string{"sbx-3", "sbx-2"}) {
		t.Errorf("ListExpiring(2) = %v", got)
	}

	// SetDeadline changes only the deadline, and only in the named state.
	before := mustGet(t, s, "sbx-3")
	ok, err := s.SetDeadline(ctx, "sbx-3", "started", at(40), at(45), "delete")
	if err != nil || !ok {
		t.Fatalf("SetDeadline = %v, %v", ok, err)
	}
	got := mustGet(t, s, "sbx-3")
	if !got.LastActivityAt.Equal(at(40)) || !got.ExpiresAt.Equal(at(45)) || got.ExpiresAction != "delete" {
		t.Errorf("after SetDeadline: %v %v %q", got.LastActivityAt, got.ExpiresAt, got.ExpiresAction)
	}
	if !got.UpdatedAt.Equal(before.UpdatedAt) || got.State != before.State {
		t.Errorf("SetDeadline changed other fields: %+v", got)
	}
	if got := ids(0); !reflect.DeepEqual(got, []string{"sbx-2", "sbx-1", "sbx-3"}) {
		t.Errorf("ListExpiring after a move = %v", got)
	}
	ok, err = s.SetDeadline(ctx, "sbx-2", "stopped", at(1), at(1), "archive")
	if err != nil || ok {
		t.Errorf("SetDeadline in the wrong state = %v, %v; want false", ok, err)
	}
	if got := mustGet(t, s, "sbx-2"); got.ExpiresAction != "stop" {
		t.Errorf("SetDeadline in the wrong state changed the record: %+v", got)
	}
	// A zero deadline takes the sandbox off the list.
	if _, err := s.SetDeadline(ctx, "sbx-2", "started", time.Time{}, time.Time{}, ""); err != nil {
		t.Fatal(err)
	}
	if got := ids(0); !reflect.DeepEqual(got, []string{"sbx-1", "sbx-3"}) {
		t.Errorf("ListExpiring after clearing = %v", got)
	}
	if ok, err := s.SetDeadline(ctx, "sbx-missing", "started", at(1), at(1), "stop"); ok || err != nil {
		t.Errorf("SetDeadline of a missing sandbox = %v, %v", ok, err)
	}
}

func testAppendEvent(t *testing.T, s store.Store) {
	ctx := auth.System(context.Background(), "test")
	sb := &store.Sandbox{ID: "sbx-1", Name: "web", State: "created"}
	mustCreate(t, s, sb)
	ev := &store.Event{State: "started", Reason: "create"}
	if err := s.UpdateSandbox(ctx, sb, ev); err != nil {
		t.Fatal(err)
	}
	if ev.SandboxName != "web" {
		t.Errorf("UpdateSandbox did not name the event: %+v", ev)
	}
	if err := s.DeleteSandbox(ctx, "sbx-1"); err != nil {
		t.Fatal(err)
	}
	// The record is gone; an event about it can still be appended.
	tomb := &store.Event{SandboxID: "sbx-1", SandboxName: "web", State: "deleted", Reason: "delete"}
	if err := s.AppendEvent(ctx, tomb); err != nil {
		t.Fatal(err)
	}
	if tomb.Seq <= ev.Seq || tomb.Time.IsZero() {
		t.Errorf("appended event = %+v, want a later seq and a time", tomb)
	}
	evs, err := s.ListEvents(ctx, "sbx-1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].State != "deleted" || evs[0].SandboxName != "web" || evs[0].Seq != tomb.Seq {
		t.Errorf("events after delete = %+v, want only the appended one", evs)
	}
	if err := s.AppendEvent(ctx, &store.Event{State: "x"}); !errdefs.Is(err, errdefs.KindInvalid) {
		t.Errorf("event without a sandbox id: %v", err)
	}

	// Pruning removes old events of deleted sandboxes only.
	live := &store.Sandbox{ID: "sbx-2", State: "created"}
	mustCreate(t, s, live)
	if err := s.UpdateSandbox(ctx, live, &store.Event{State: "started", Time: at(1)}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendEvent(ctx, &store.Event{SandboxID: "sbx-old", State: "deleted", Time: at(1)}); err != nil {
		t.Fatal(err)
	}
	n, err := s.PruneEvents(ctx, at(30))
	if err != nil || n != 1 {
		t.Errorf("PruneEvents = %d, %v; want 1", n, err)
	}
	evs, _ = s.ListEvents(ctx, "", 0, 0)
	if len(evs) != 2 || evs[0].SandboxID != "sbx-1" || evs[1].SandboxID != "sbx-2" {
		t.Errorf("events after pruning = %+v", evs)
	}
}
