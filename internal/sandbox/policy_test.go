package sandbox

import (
	"context"
	"errors"
	"github.com/sbxhq/sbx/internal/auth"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/blob"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

func TestPlan(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0.Add(time.Hour)
	pol := func(p store.Policy) store.Spec { return store.Spec{Policy: &p} }
	cases := []struct {
		name   string
		sb     store.Sandbox
		active time.Time
		held   bool
		at     time.Time
		action string
		reason string
	}{
		{"started idles from its last activity", store.Sandbox{State: "started", StartedAt: t0, Spec: pol(store.Policy{AutoStopSeconds: 60})},
			t0.Add(10 * time.Minute), false, t0.Add(11 * time.Minute), actionStop, "idle"},
		{"a start counts as activity", store.Sandbox{State: "started", StartedAt: t0, Spec: pol(store.Policy{AutoStopSeconds: 60})},
			time.Time{}, false, t0.Add(time.Minute), actionStop, "idle"},
		{"a held sandbox is active now", store.Sandbox{State: "started", StartedAt: t0, Spec: pol(store.Policy{AutoStopSeconds: 60})},
			t0, true, now.Add(time.Minute), actionStop, "idle"},
		{"keep-alive never idles", store.Sandbox{State: "started", StartedAt: t0, Spec: pol(store.Policy{AutoStopSeconds: 60, KeepAlive: true})},
			t0, false, time.Time{}, "", ""},
		{"ttl beats idle", store.Sandbox{State: "started", CreatedAt: t0, StartedAt: t0, Spec: pol(store.Policy{AutoStopSeconds: 600, TTLSeconds: 60})},
			t0, false, t0.Add(time.Minute), actionDelete, "ttl"},
		{"ttl runs from when it was set", store.Sandbox{State: "stopped", CreatedAt: t0, StoppedAt: t0, Spec: pol(store.Policy{AutoArchiveSeconds: 86400, AutoDeleteSeconds: -1, TTLSeconds: 60, TTLFrom: t0.Add(time.Hour)})},
			t0, false, t0.Add(61 * time.Minute), actionDelete, "ttl"},
		{"stopped archives", store.Sandbox{State: "stopped", StoppedAt: t0, Spec: pol(store.Policy{AutoArchiveSeconds: 3600, AutoDeleteSeconds: -1})},
			t0, false, t0.Add(time.Hour), actionArchive, "auto-archive"},
		{"delete wins a tie with archive", store.Sandbox{State: "stopped", StoppedAt: t0, Spec: pol(store.Policy{AutoArchiveSeconds: 60, AutoDeleteSeconds: 60})},
			t0, false, t0.Add(time.Minute), actionDelete, "auto-delete"},
		{"ephemeral deletes at stop", store.Sandbox{State: "stopped", StoppedAt: t0, Spec: pol(store.Policy{AutoArchiveSeconds: 60, AutoDeleteSeconds: 0, Ephemeral: true})},
			t0, false, t0, actionDelete, "auto-delete"},
		{"archived deletes after autoDelete from its stop", store.Sandbox{State: "archived", StoppedAt: t0, Spec: pol(store.Policy{AutoArchiveSeconds: 60, AutoDeleteSeconds: 7200})},
			t0, false, t0.Add(2 * time.Hour), actionDelete, "auto-delete"},
		{"archived with no delete has no deadline", store.Sandbox{State: "archived", StoppedAt: t0, Spec: pol(store.Policy{AutoArchiveSeconds: 60, AutoDeleteSeconds: -1})},
			t0, false, time.Time{}, "", ""},
		{"records without a policy get the defaults", store.Sandbox{State: "started", StartedAt: t0},
			t0, false, t0.Add(15 * time.Minute), actionStop, "idle"},
		{"transitional states wait", store.Sandbox{State: "stopping", StartedAt: t0, Spec: pol(store.Policy{AutoStopSeconds: 1})},
			t0, false, time.Time{}, "", ""},
		{"started pauses when idle", store.Sandbox{State: "started", StartedAt: t0, Spec: pol(store.Policy{AutoPauseSeconds: 60})},
			t0.Add(10 * time.Minute), false, t0.Add(11 * time.Minute), actionPause, "idle"},
		{"keep-alive never pauses", store.Sandbox{State: "started", StartedAt: t0, Spec: pol(store.Policy{AutoPauseSeconds: 60, KeepAlive: true})},
			t0, false, time.Time{}, "", ""},
		{"gvisor records without a policy pause after an hour", store.Sandbox{State: "started", StartedAt: t0, Spec: store.Spec{Class: ClassGVisor}},
			t0, false, t0.Add(time.Hour), actionPause, "idle"},
		{"paused waits for its ttl only", store.Sandbox{State: "paused", CreatedAt: t0, StartedAt: t0, Spec: pol(store.Policy{AutoPauseSeconds: 60, AutoArchiveSeconds: 60, TTLSeconds: 7200})},
			t0, false, t0.Add(2 * time.Hour), actionDelete, "ttl"},
	}
	for _, tc := range cases {
		at, action, reason := plan(&tc.sb, tc.active, tc.held, now)
		if !at.Equal(tc.at) || action != tc.action || reason != tc.reason {
			t.Errorf("%s: plan = %v %q %q, want %v %q %q", tc.name, at, action, reason, tc.at, tc.action, tc.reason)
		}
	}
}

func TestApplyPolicy(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	p := defaultPolicy(ClassContainer)
	if err := applyPolicy(&p, wire.UpdateSandboxRequest{AutoArchiveSeconds: wire.Ptr(0), TTLSeconds: wire.Ptr(60), Ephemeral: wire.Ptr(true)}, now); err != nil {
		t.Fatal(err)
	}
	if p.AutoArchiveSeconds != wire.MaxAutoArchiveSeconds || p.TTLSeconds != 60 || !p.TTLFrom.Equal(now) || !p.Ephemeral || p.AutoDeleteSeconds != 0 {
		t.Errorf("after update: %+v", p)
	}
	// Turning ephemeral off goes back to never deleting.
	if err := applyPolicy(&p, wire.UpdateSandboxRequest{Ephemeral: wire.Ptr(false), TTLSeconds: wire.Ptr(0)}, now); err != nil {
		t.Fatal(err)
	}
	if p.Ephemeral || p.AutoDeleteSeconds != -1 || p.TTLSeconds != 0 || !p.TTLFrom.IsZero() {
		t.Errorf("after turning off: %+v", p)
	}
	before := p
	for _, bad := range []wire.UpdateSandboxRequest{
		{AutoStopSeconds: wire.Ptr(-1)}, {AutoArchiveSeconds: wire.Ptr(wire.MaxAutoArchiveSeconds + 1)}, {AutoDeleteSeconds: wire.Ptr(-2)},
		{TTLSeconds: wire.Ptr(maxPolicySeconds + 1)}, {Ephemeral: wire.Ptr(true), AutoDeleteSeconds: wire.Ptr(5)},
		{AutoPauseSeconds: wire.Ptr(-1)}, {AutoStopSeconds: wire.Ptr(60), AutoPauseSeconds: wire.Ptr(60)},
	} {
		if err := applyPolicy(&p, bad, now); !errdefs.Is(err, errdefs.KindInvalid) {
			t.Errorf("%+v: want invalid, got %v", bad, err)
		}
		if p != before {
			t.Errorf("%+v: a refused update changed the policy", bad)
		}
	}
}

// An idle sandbox is stopped or paused, never both: gvisor pauses by
// default, and naming one interval turns the other off.
func TestIdlePolicyByClass(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		class       string
		req         wire.CreateSandboxRequest
		stop, pause int
	}{
		{ClassContainer, wire.CreateSandboxRequest{}, wire.DefaultAutoStopSeconds, 0},
		{ClassGVisor, wire.CreateSandboxRequest{}, 0, wire.DefaultAutoPauseSeconds},
		{ClassGVisor, wire.CreateSandboxRequest{AutoStopSeconds: wire.Ptr(120)}, 120, 0},
		{ClassContainer, wire.CreateSandboxRequest{AutoPauseSeconds: wire.Ptr(30)}, 0, 30},
		{ClassGVisor, wire.CreateSandboxRequest{AutoPauseSeconds: wire.Ptr(0)}, 0, 0},
		{ClassGVisor, wire.CreateSandboxRequest{AutoStopSeconds: wire.Ptr(0), AutoPauseSeconds: wire.Ptr(90)}, 0, 90},
	} {
		p, err := newPolicy(tc.req, tc.class, now)
		if err != nil {
			t.Fatalf("%s %+v: %v", tc.class, tc.req, err)
		}
		if p.AutoStopSeconds != tc.stop || p.AutoPauseSeconds != tc.pause {
			t.Errorf("%s %+v: autoStop %d autoPause %d, want %d %d", tc.class, tc.req, p.AutoStopSeconds, p.AutoPauseSeconds, tc.stop, tc.pause)
		}
	}
	// An update naming one turns the other off.
	p := defaultPolicy(ClassGVisor)
	if err := applyPolicy(&p, wire.UpdateSandboxRequest{AutoStopSeconds: wire.Ptr(60)}, now); err != nil || p.AutoStopSeconds != 60 || p.AutoPauseSeconds != 0 {
		t.Errorf("update to auto-stop: %+v, %v", p, err)
	}
}

// countingRuntime counts starts of a fakeRuntime.
type countingRuntime struct {
	*fakeRuntime
	starts atomic.Int32
}

func (c *countingRuntime) Start(ctx context.Context, inst *runtime.Instance) (runtime.Status, error) {
	c.starts.Add(1)
	return c.fakeRuntime.Start(ctx, inst)
}

func newPolicyManager(t *testing.T, edit func(*Config)) (*Manager, *countingRuntime, store.Store) {
	t.Helper()
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "sbx.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rt := &countingRuntime{fakeRuntime: &fakeRuntime{containers: map[string]runtime.Status{}}}
	blobs, err := blob.NewDir(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{DataDir: t.TempDir(), Store: st, Images: fakeImages{}, Rootfs: fakeRootfs{}, Runtimes: map[string]runtime.Runtime{ClassContainer: rt},
		ReadyTimeout: 100 * time.Millisecond, Blobs: blobs}
	if edit != nil {
		edit(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m, rt, st
}

// A lazy start that takes longer than the timeout answers 503 and the
// operation does not run; concurrent callers share that one start.
func TestLazyStartTimesOutAndIsShared(t *testing.T) {
	m, rt, st := newPolicyManager(t, func(c *Config) {
		c.ReadyTimeout = time.Second // the fake starts no agent: each start takes this long, then fails
		c.LazyStartTimeout = 50 * time.Millisecond
	})
	ctx := auth.System(context.Background(), "test")
	if err := st.CreateSandbox(ctx, &store.Sandbox{ID: "sbx-lazy", State: "stopped", Spec: store.Spec{Image: "base", Layers: []string{"l"}}}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			client, _, err := m.Agent(ctx, "sbx-lazy")
			if client != nil || errdefs.CodeOf(err) != "SANDBOX_UNAVAILABLE" || !errdefs.Is(err, errdefs.KindUnavailable) {
				t.Errorf("Agent during a slow start = %v, %v; want SANDBOX_UNAVAILABLE", client, err)
			}
		})
	}
	wg.Wait()
	// The start goes on without the callers, and fails: the fake has no agent.
	deadline := time.Now().Add(10 * time.Second)
	for {
		sb, err := st.GetSandbox(ctx, "sbx-lazy")
		if err == nil && sb.State == wire.StateError {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lazy start did not finish: %+v %v", sb, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := rt.starts.Load(); n != 1 {
		t.Errorf("%d starts for 5 concurrent callers, want 1", n)
	}
	evs, _ := st.ListEvents(ctx, "sbx-lazy", 0, 0)
	if len(evs) == 0 || evs[0].State != wire.StateStarting || evs[0].Reason != "lazy" {
		t.Errorf("events: %+v", evs)
	}
}

// Reconcile finishes or rolls back archives and restores a crash cut short.
func TestReconcileArchiveStates(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (archives keep owners)")
	}
	m, _, st := newPolicyManager(t, nil)
	ctx := auth.System(context.Background(), "test")
	put := func(sb *store.Sandbox, files map[string]string, blobData string) {
		t.Helper()
		sb.Spec.Image = "base"
		if err := st.CreateSandbox(ctx, sb); err != nil {
			t.Fatal(err)
		}
		for name, data := range files {
			p := filepath.Join(m.dirsOf(sb.ID).root, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if blobData != "" {
			if _, err := m.cfg.Blobs.Put(ctx, archiveKey(sb.ID), stringsReader(blobData)); err != nil {
				t.Fatal(err)
			}
		}
	}
	info := func(id string) *store.ArchiveInfo {
		return &store.ArchiveInfo{Key: archiveKey(id), SHA256: "x", Size: 1}
	}
	put(&store.Sandbox{ID: "sbx-archiving", State: "archiving"}, map[string]string{"upper/keep": "data"}, "partial")
	put(&store.Sandbox{ID: "sbx-archived", State: "archived", Spec: store.Spec{Archive: info("sbx-archived")}}, map[string]string{"upper/leftover": "x"}, "whole")
	put(&store.Sandbox{ID: "sbx-restored", State: "restoring", Spec: store.Spec{Archive: info("sbx-restored")}}, map[string]string{"upper/back": "x"}, "whole")
	put(&store.Sandbox{ID: "sbx-cut", State: "restoring", Spec: store.Spec{Archive: info("sbx-cut")}}, map[string]string{"upper.restore/half": "x"}, "whole")

	if err := m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	check := func(id string, state wire.State, archived, blobThere bool, present, absent []string) {
		t.Helper()
		sb, err := st.GetSandbox(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if sb.State != state || (sb.Spec.Archive != nil) != archived {
			t.Errorf("%s: state %s, archive %+v; want %s, archived %v", id, sb.State, sb.Spec.Archive, state, archived)
		}
		if ok, _ := m.cfg.Blobs.Exists(ctx, archiveKey(id)); ok != blobThere {
			t.Errorf("%s: blob exists %v, want %v", id, ok, blobThere)
		}
		for _, p := range present {
			if _, err := os.Stat(filepath.Join(m.dirsOf(id).root, p)); err != nil {
				t.Errorf("%s: %s is gone: %v", id, p, err)
			}
		}
		for _, p := range absent {
			if _, err := os.Stat(filepath.Join(m.dirsOf(id).root, p)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: %s is still there", id, p)
			}
		}
	}
	check("sbx-archiving", "stopped", false, false, []string{"upper/keep"}, nil)
	check("sbx-archived", "archived", true, true, nil, []string{"upper"})
	check("sbx-restored", "stopped", false, false, []string{"upper/back"}, nil)
	check("sbx-cut", "archived", true, true, nil, []string{"upper", "upper.restore"})
}

// Archive and restore through the Manager: the files come back, the local
// copy and then the blob go.
func TestArchiveRoundTrip(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (archives keep owners)")
	}
	m, _, st := newPolicyManager(t, nil)
	ctx := auth.System(context.Background(), "test")
	if err := st.CreateSandbox(ctx, &store.Sandbox{ID: "sbx-a", State: "stopped", Spec: store.Spec{Image: "base", Layers: []string{"l"}}}); err != nil {
		t.Fatal(err)
	}
	upper := m.dirsOf("sbx-a").upper
	os.MkdirAll(filepath.Join(upper, "dir/empty"), 0o755)
	os.WriteFile(filepath.Join(upper, "dir/f"), []byte("contents"), 0o640)
	sb, err := m.Archive(ctx, "sbx-a")
	if err != nil || sb.State != wire.StateArchived || sb.Spec.Archive == nil {
		t.Fatalf("Archive = %+v, %v", sb, err)
	}
	if _, err := os.Stat(upper); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("upper still there: %v", err)
	}
	// Start restores, then fails (the fake runs no agent): the files are back anyway.
	if _, err := m.Start(ctx, "sbx-a"); err == nil {
		t.Fatal("start with the fake runtime succeeded")
	}
	if b, err := os.ReadFile(filepath.Join(upper, "dir/f")); err != nil || string(b) != "contents" {
		t.Errorf("restored file: %q, %v", b, err)
	}
	if fi, err := os.Stat(filepath.Join(upper, "dir/empty")); err != nil || !fi.IsDir() {
		t.Errorf("restored empty dir: %v", err)
	}
	if ok, _ := m.cfg.Blobs.Exists(ctx, archiveKey("sbx-a")); ok {
		t.Error("the blob outlived the restore")
	}
	sb, _ = st.GetSandbox(ctx, "sbx-a")
	if sb.Spec.Archive != nil {
		t.Errorf("record still names the archive: %+v", sb.Spec.Archive)
	}
}

// The scheduler acts on deadlines that are due when the daemon starts.
func TestSchedulerDeletesDueSandbox(t *testing.T) {
	m, _, st := newPolicyManager(t, nil)
	ctx := auth.System(context.Background(), "test")
	old := time.Now().Add(-time.Hour)
	p := store.Policy{AutoArchiveSeconds: 60, AutoDeleteSeconds: 0, Ephemeral: true}
	if err := st.CreateSandbox(ctx, &store.Sandbox{ID: "sbx-eph", Name: "eph", State: "stopped", StoppedAt: old, Spec: store.Spec{Image: "base", Policy: &p}}); err != nil {
		t.Fatal(err)
	}
	if err := m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	// The "deleted" event is appended once the record is gone.
	deadline := time.Now().Add(10 * time.Second)
	var evs []store.Event
	for {
		evs, _ = st.ListEvents(ctx, "sbx-eph", 0, 0)
		if len(evs) > 0 && evs[len(evs)-1].State == "deleted" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the due sandbox was not deleted: %+v", evs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := st.GetSandbox(ctx, "sbx-eph"); !errdefs.Is(err, errdefs.KindNotFound) {
		t.Errorf("record still there: %v", err)
	}
	if len(evs) != 1 || evs[0].State != "deleted" || evs[0].Reason != "auto-delete" || evs[0].SandboxName != "eph" {
		t.Errorf("events after the delete: %+v", evs)
	}
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }

// The scheduler's workers never wait on a sandbox's lock: sandboxes held by
// long operations (a graceful stop with a long grace, say), more of them
// than there are workers, do not keep another sandbox's deadline from
// firing; theirs fire once they are free.
func TestSchedulerDoesNotWaitOnLockedSandboxes(t *testing.T) {
	m, _, st := newPolicyManager(t, nil)
	ctx := auth.System(context.Background(), "test")
	now := time.Now().UTC()
	put := func(id string, due time.Duration) {
		p := store.Policy{TTLSeconds: 1, TTLFrom: now.Add(due - time.Second), AutoDeleteSeconds: -1, AutoArchiveSeconds: 3600}
		if err := st.CreateSandbox(ctx, &store.Sandbox{ID: id, State: wire.StateStopped, Spec: store.Spec{Image: "base", Policy: &p}}); err != nil {
			t.Fatal(err)
		}
	}
	var held []string
	var unlocks []func()
	for i := range 2 * maxDueActions {
		id := "sbx-held" + string(rune('a'+i))
		put(id, 0)
		held = append(held, id)
		unlock := m.locks.Lock(id)
		var once sync.Once
		unlocks = append(unlocks, func() { once.Do(unlock) })
	}
	t.Cleanup(func() { // before m.Close, which waits for the actions
		for _, unlock := range unlocks {
			unlock()
		}
	})
	put("sbx-free", 300*time.Millisecond) // due after the held ones
	m.startPolicies(ctx)

	gone := func(id string) func() bool {
		return func() bool {
			_, err := st.GetSandbox(ctx, id)
			return errdefs.Is(err, errdefs.KindNotFound)
		}
	}
	waitFor(t, "the TTL of the free sandbox", gone("sbx-free"))
	for _, id := range held {
		if gone(id)() {
			t.Fatalf("%s was deleted while another operation held it", id)
		}
	}
	for _, unlock := range unlocks {
		unlock()
	}
	for _, id := range held {
		waitFor(t, "the TTL of "+id+" once it is free", gone(id))
	}
}
