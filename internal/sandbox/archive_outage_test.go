package sandbox

import (
	"context"
	"testing"

	"github.com/sbxhq/sbx/internal/blob"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// outageBlobs is a blob store whose deletes fail with err until fails
// runs out.
type outageBlobs struct {
	blob.Store
	fails int
	err   error
	tries int
}

func (o *outageBlobs) Delete(ctx context.Context, key string) error {
	o.tries++
	if o.fails > 0 {
		o.fails--
		return o.err
	}
	return o.Store.Delete(ctx, key)
}

// A delete waits out a short outage of the blob store instead of leaving
// the sandbox in error (TestChaosS3 met one), and fails at once on any
// other error.
func TestDeleteArchiveWaitsOutAnOutage(t *testing.T) {
	dir, err := blob.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sb := &store.Sandbox{ID: "sbx-dddddddddddddddd"}
	down := &outageBlobs{Store: dir, fails: 2, err: errdefs.Unavailable(wire.CodeBlobStoreUnavailable, "S3 is unreachable")}
	m := &Manager{cfg: Config{Blobs: down}}
	if err := m.deleteArchive(t.Context(), sb); err != nil || down.tries != 3 {
		t.Fatalf("delete through a 2-try outage: %v after %d tries, want success on the 3rd", err, down.tries)
	}
	broken := &outageBlobs{Store: dir, fails: 1, err: errdefs.Invalid(wire.CodeInvalidSandbox, "refused")}
	m = &Manager{cfg: Config{Blobs: broken}}
	if err := m.deleteArchive(t.Context(), sb); err == nil || broken.tries != 1 {
		t.Fatalf("a refusal: %v after %d tries, want it at once", err, broken.tries)
	}
	saved := blobOutageWait
	blobOutageWait = 0
	t.Cleanup(func() { blobOutageWait = saved })
	long := &outageBlobs{Store: dir, fails: 1 << 30, err: down.err}
	m = &Manager{cfg: Config{Blobs: long}}
	if err := m.deleteArchive(t.Context(), sb); err == nil {
		t.Fatal("an outage longer than blobOutageWait: the delete succeeded")
	}
}
