package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/blob"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// freezingRuntime is fakeRuntime with a freezer that counts its freezes.
type freezingRuntime struct {
	*fakeRuntime
	mu      sync.Mutex
	frozen  bool
	freezes int
}

func (f *freezingRuntime) Pause(context.Context, string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.frozen = true
	f.freezes++
	return nil
}

func (f *freezingRuntime) Resume(context.Context, string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.frozen = false
	return nil
}

func (f *freezingRuntime) Paused(context.Context, string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.frozen, nil
}

// A running sandbox's checkpoint: written only when its files changed,
// frozen while packed, replacing the previous checkpoint, and never by a
// pod that no longer holds the claim or over a copy saved later.
func TestCheckpoint(t *testing.T) {
	const id = "sbx-bbbbbbbbbbbbbbbb"
	m, rt, blobs := checkpointManager(t, id)
	ctx := auth.System(context.Background(), "test")
	upper := m.dirsOf(id).upper
	write := func(s string) {
		if err := os.MkdirAll(upper, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(upper, "f"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	manifest := func() *Transfer {
		tr, err := m.Manifest(ctx, id)
		if err != nil || tr == nil {
			t.Fatalf("manifest: %v %v", tr, err)
		}
		return tr
	}
	if _, err := m.Claim(ctx, id, "pod-1"); err != nil {
		t.Fatal(err)
	}

	write("v1")
	first, err := m.Checkpoint(ctx, id, "owner", "pod-1", "")
	if err != nil || first.Unchanged || first.Fenced || first.Bytes == 0 {
		t.Fatalf("first checkpoint: %+v %v", first, err)
	}
	tr := manifest()
	if !tr.Checkpoint || tr.Pod != "pod-1" || tr.Owner != "owner" || !tr.SavedAt.Equal(first.At) || !isCheckpointKey(tr.Spec.Archive.Key) {
		t.Fatalf("manifest after the first checkpoint: %+v", tr)
	}
	if rt.freezes != 1 || rt.frozen {
		t.Fatalf("freezes %d, frozen %v: want it frozen once and thawed", rt.freezes, rt.frozen)
	}

	again, err := m.Checkpoint(ctx, id, "owner", "pod-1", first.Fingerprint)
	if err != nil || !again.Unchanged || rt.freezes != 1 {
		t.Fatalf("unchanged files: %+v %v, freezes %d: want nothing done", again, err, rt.freezes)
	}

	write("v2")
	second, err := m.Checkpoint(ctx, id, "owner", "pod-1", first.Fingerprint)
	if err != nil || second.Unchanged || second.Fingerprint == first.Fingerprint {
		t.Fatalf("second checkpoint: %+v %v", second, err)
	}
	if ok, _ := blobs.Exists(ctx, tr.Spec.Archive.Key); ok {
		t.Fatal("the replaced checkpoint's archive is still in the blob store")
	}
	tr = manifest()

	// The successor claims the sandbox: the old pod's host writes nothing.
	prev, err := m.Claim(ctx, id, "pod-2")
	if err != nil || prev.Pod != "pod-1" {
		t.Fatalf("claim: %+v %v", prev, err)
	}
	write("v3")
	fenced, err := m.Checkpoint(ctx, id, "owner", "pod-1", second.Fingerprint)
	if err != nil || !fenced.Fenced {
		t.Fatalf("checkpoint of a pod without the claim: %+v %v", fenced, err)
	}
	if got := manifest(); got.Spec.Archive.Key != tr.Spec.Archive.Key {
		t.Fatalf("the fenced checkpoint wrote manifest %+v", got)
	}

	// What the successor lost: what came after the second checkpoint.
	rec := Recovered(prev, "pod-2", tr, time.Now())
	if rec == nil || rec.From != "checkpoint" || rec.SavedAt == nil || !rec.SavedAt.Equal(second.At) {
		t.Fatalf("recovery: %+v", rec)
	}

	// A copy saved later is never overwritten by an older one.
	newer := *tr
	newer.Pod, newer.SavedAt = "pod-2", second.At.Add(time.Hour)
	if ok, err := m.putManifest(ctx, newer); !ok || err != nil {
		t.Fatalf("put the newer manifest: %v %v", ok, err)
	}
	older := *tr
	older.Pod = "pod-2"
	if ok, err := m.putManifest(ctx, older); ok || err != nil {
		t.Fatalf("an older manifest over a newer one: written %v, %v", ok, err)
	}

	// A checkpoint whose host died before its manifest is dropped too.
	for _, key := range checkpointKeys(id) {
		if _, err := blobs.Put(ctx, key, strings.NewReader("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.DropTransfer(ctx, id); err != nil {
		t.Fatal(err)
	}
	for _, key := range checkpointKeys(id) {
		if ok, _ := blobs.Exists(ctx, key); ok {
			t.Fatalf("DropTransfer left checkpoint %s", key)
		}
	}
}

func TestRecovered(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	saved := now.Add(-time.Minute)
	archive := store.Spec{Archive: &store.ArchiveInfo{Key: "k", At: saved}}
	for _, c := range []struct {
		name string
		prev Claim
		tr   *Transfer
		want string // From; "" for no recovery
	}{
		{"first pod", Claim{}, nil, ""},
		{"same pod again", Claim{Pod: "p2", Generation: 2}, nil, ""},
		{"handed off by its predecessor", Claim{Pod: "p1"}, &Transfer{Pod: "p1", Spec: archive, SavedAt: saved}, ""},
		{"handed off before pods were recorded", Claim{Pod: "p1"}, &Transfer{Spec: archive}, ""},
		{"lost, with a checkpoint", Claim{Pod: "p1"}, &Transfer{Pod: "p1", Checkpoint: true, Spec: archive, SavedAt: saved}, "checkpoint"},
		{"lost, with an older handoff", Claim{Pod: "p1"}, &Transfer{Pod: "p0", Spec: archive, SavedAt: saved}, "archive"},
		{"lost, with nothing saved", Claim{Pod: "p1"}, nil, "fresh"},
	} {
		rec := Recovered(c.prev, "p2", c.tr, now)
		switch {
		case c.want == "" && rec != nil:
			t.Errorf("%s: %+v, want none", c.name, rec)
		case c.want != "" && (rec == nil || rec.From != c.want):
			t.Errorf("%s: %+v, want from %s", c.name, rec, c.want)
		case rec != nil && c.want != "fresh" && (rec.SavedAt == nil || !rec.SavedAt.Equal(saved)):
			t.Errorf("%s: saved at %v, want %v", c.name, rec.SavedAt, saved)
		case rec != nil && c.want == "fresh" && rec.SavedAt != nil:
			t.Errorf("%s: saved at %v, want none", c.name, rec.SavedAt)
		}
	}
}

// checkpointManager is a Manager over SQLite, a blob directory and a
// runtime that counts freezes, with sandbox id started in its store.
func checkpointManager(tb testing.TB, id string) (*Manager, *freezingRuntime, *blob.Dir) {
	tb.Helper()
	st, err := store.OpenSQLite(filepath.Join(tb.TempDir(), "sbx.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	blobs, err := blob.NewDir(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	rt := &freezingRuntime{fakeRuntime: &fakeRuntime{containers: map[string]runtime.Status{}}}
	m, err := New(Config{DataDir: tb.TempDir(), Store: st, Images: fakeImages{}, Rootfs: fakeRootfs{}, Blobs: blobs,
		Runtimes: map[string]runtime.Runtime{ClassContainer: rt}, ReadyTimeout: 100 * time.Millisecond})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(m.Close)
	ctx := auth.System(context.Background(), "test")
	if err := st.CreateSandbox(ctx, &store.Sandbox{ID: id, State: wire.StateStarted, Spec: store.Spec{Image: "base"}}); err != nil {
		tb.Fatal(err)
	}
	return m, rt, blobs
}
