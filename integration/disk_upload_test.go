package integration

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// TestUploadIntoOtherSandboxOnFullHostDisk fills the host's data disk from
// one sandbox without a disk limit; an upload into another sandbox must then
// answer NO_SPACE, at once and every time: not SANDBOX_UNAVAILABLE, and
// never hang. The data dir is a small ext4 filesystem of the test's own.
func TestUploadIntoOtherSandboxOnFullHostDisk(t *testing.T) {
	dataDir := smallFilesystem(t, 192)
	d := startDaemonAt(t, dataDir, fullDiskArgs()...)
	other := d.create(sdk.CreateSandboxRequest{Name: "other"})
	hog := d.create(sdk.CreateSandboxRequest{Name: "hog"})
	fillHostDisk(t, d, hog.ID, dataDir)

	sizes := []int64{1 << 20, 1, 64 << 20, 4 << 20, 0, 256 << 20, 512, 32 << 20, 128 << 20}
	for i := range 3 * len(sizes) {
		size := sizes[i%len(sizes)]
		// The bound only turns a hang into a failure; an answer comes at once.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := d.client.Upload(ctx, other.ID, "/workspace/up"+strconv.Itoa(i), io.LimitReader(zeros{}, size), 0o644)
		cancel()
		if size == 0 && err == nil {
			continue // an empty file needs an inode, which a full disk may still have
		}
		var apiErr *sdk.APIError
		if !errors.As(err, &apiErr) || apiErr.Code != sdk.CodeNoSpace || apiErr.StatusCode != 507 {
			t.Errorf("upload %d (%d bytes) into another sandbox on a full host disk: %v, want 507 NO_SPACE", i, size, err)
		}
	}
	// Side by side too.
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				_, err := d.client.Upload(ctx, other.ID, fmt.Sprintf("/workspace/par%d-%d", w, i), io.LimitReader(zeros{}, 64<<20), 0o644)
				cancel()
				var apiErr *sdk.APIError
				if !errors.As(err, &apiErr) || apiErr.Code != sdk.CodeNoSpace || apiErr.StatusCode != 507 {
					t.Errorf("concurrent upload %d/%d into another sandbox on a full host disk: %v, want 507 NO_SPACE", w, i, err)
				}
			}
		}()
	}
	wg.Wait()
	// The sandbox itself is fine: it answers, and reads what it has.
	if out := d.exec(other.ID, "echo ok"); out != "ok" {
		t.Errorf("exec in the other sandbox: %q", out)
	}
}
