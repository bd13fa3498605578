package sandbox

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/blob"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// A host whose pod was replaced while it was cut off holds a stale copy:
// its Handoff for the old pod forgets the copy and writes nothing over the
// newer manifest, because the new pod claimed the sandbox first.
func TestHandoffOfAFencedCopyWritesNothing(t *testing.T) {
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "sbx.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	blobs, err := blob.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rt := &fakeRuntime{containers: map[string]runtime.Status{}}
	m, err := New(Config{DataDir: t.TempDir(), Store: st, Images: fakeImages{}, Rootfs: fakeRootfs{}, Blobs: blobs,
		Runtimes: map[string]runtime.Runtime{ClassContainer: rt}, ReadyTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	ctx := auth.System(context.Background(), "test")
	const id = "sbx-aaaaaaaaaaaaaaaa"
	if err := st.CreateSandbox(ctx, &store.Sandbox{ID: id, State: wire.StateStopped, Spec: store.Spec{Image: "base"}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pod  string
		want Claim
	}{
		{"pod-1", Claim{"pod-1", 1}},
		{"pod-1", Claim{"pod-1", 1}}, // the holder keeps it
		{"", Claim{"pod-1", 1}},      // no pod, no claim
		{"pod-2", Claim{"pod-2", 2}}, // the successor, on another host
	} {
		if _, err := m.Claim(ctx, id, c.pod); err != nil {
			t.Fatal(err)
		}
		if got, err := m.readClaim(ctx, id); err != nil || got != c.want {
			t.Fatalf("after Claim(%q): %+v %v, want %+v", c.pod, got, err, c.want)
		}
	}
	if err := m.Handoff(ctx, id, "owner", "pod-1", StopOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetSandbox(ctx, id); !errdefs.Is(err, errdefs.KindNotFound) {
		t.Fatalf("the stale copy is still here: %v", err)
	}
	for _, key := range []string{transferKey(id), archiveKey(id)} {
		if ok, _ := blobs.Exists(ctx, key); ok {
			t.Fatalf("the fenced Handoff wrote %s", key)
		}
	}
	if err := m.DropTransfer(ctx, id); err != nil {
		t.Fatal(err)
	}
	if ok, _ := blobs.Exists(ctx, claimKey(id)); ok {
		t.Fatal("DropTransfer left the claim")
	}
}
