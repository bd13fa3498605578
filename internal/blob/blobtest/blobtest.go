// Package blobtest is the conformance suite of blob.Store: the contract in
// internal/blob/blob.go, checked against any implementation. Each
// implementation's tests call Run.
package blobtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/sbxhq/sbx/internal/blob"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Run checks the contract against stores made by newStore, a fresh and
// empty one for each subtest.
func Run(t *testing.T, newStore func(t *testing.T) blob.Store) {
	t.Run("RoundTrip", func(t *testing.T) { roundTrip(t, newStore(t)) })
	t.Run("Missing", func(t *testing.T) { missing(t, newStore(t)) })
	t.Run("BadKeys", func(t *testing.T) { badKeys(t, newStore(t)) })
	t.Run("FailedPutKeepsOld", func(t *testing.T) { failedPutKeepsOld(t, newStore(t)) })
	t.Run("Concurrent", func(t *testing.T) { concurrent(t, newStore(t)) })
}

const key = "sandboxes/sbx-1/upper.tar.zst"

// get reads key whole.
func get(t *testing.T, s blob.Store, key string) []byte {
	t.Helper()
	rc, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("Get %s: %v", key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	return b
}

// A large object (more than one part for a store that uploads in parts)
// from a reader that hides its length, replaced, then deleted.
func roundTrip(t *testing.T, s blob.Store) {
	ctx := context.Background()
	data := make([]byte, 12<<20+123)
	rand.Read(data)
	n, err := s.Put(ctx, key, io.MultiReader(bytes.NewReader(data))) // the store must stream, not stat
	if err != nil || n != int64(len(data)) {
		t.Fatalf("Put = %d, %v; want %d", n, err, len(data))
	}
	if ok, err := s.Exists(ctx, key); !ok || err != nil {
		t.Errorf("Exists = %v, %v", ok, err)
	}
	if got := get(t, s, key); !bytes.Equal(got, data) {
		t.Fatalf("Get returned %d other bytes", len(got))
	}
	if _, err := s.Put(ctx, key, bytes.NewReader([]byte("new"))); err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, key); string(got) != "new" {
		t.Errorf("after a replace: %q", got)
	}
	if err := s.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Exists(ctx, key); ok || err != nil {
		t.Errorf("Exists after Delete = %v, %v", ok, err)
	}
	if _, err := s.Put(ctx, "empty", bytes.NewReader(nil)); err != nil {
		t.Fatalf("Put of an empty object: %v", err)
	}
	if got := get(t, s, "empty"); len(got) != 0 {
		t.Errorf("empty object read back as %d bytes", len(got))
	}
}

// A missing key: Get is BLOB_NOT_FOUND, Exists false, Delete no error.
func missing(t *testing.T, s blob.Store) {
	ctx := context.Background()
	if _, err := s.Get(ctx, "missing/k"); errdefs.CodeOf(err) != wire.CodeBlobNotFound || !errdefs.Is(err, errdefs.KindNotFound) {
		t.Errorf("Get of a missing key = %v, want BLOB_NOT_FOUND", err)
	}
	if ok, err := s.Exists(ctx, "missing/k"); ok || err != nil {
		t.Errorf("Exists of a missing key = %v, %v", ok, err)
	}
	if err := s.Delete(ctx, "missing/k"); err != nil {
		t.Errorf("Delete of a missing key: %v", err)
	}
}

// Keys outside blob.CheckKey's rules are refused by every operation.
func badKeys(t *testing.T, s blob.Store) {
	ctx := context.Background()
	for _, k := range []string{"", "/abs", "../x", "a/../b", "a b"} {
		if _, err := s.Put(ctx, k, bytes.NewReader([]byte("x"))); errdefs.CodeOf(err) != wire.CodeInvalidBlobKey {
			t.Errorf("Put %q = %v, want INVALID_BLOB_KEY", k, err)
		}
		if _, err := s.Get(ctx, k); errdefs.CodeOf(err) != wire.CodeInvalidBlobKey {
			t.Errorf("Get %q = %v, want INVALID_BLOB_KEY", k, err)
		}
		if _, err := s.Exists(ctx, k); errdefs.CodeOf(err) != wire.CodeInvalidBlobKey {
			t.Errorf("Exists %q = %v, want INVALID_BLOB_KEY", k, err)
		}
		if err := s.Delete(ctx, k); errdefs.CodeOf(err) != wire.CodeInvalidBlobKey {
			t.Errorf("Delete %q = %v, want INVALID_BLOB_KEY", k, err)
		}
	}
}

// brokenReader yields n bytes, then fails.
type brokenReader struct{ n int }

func (r *brokenReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, errors.New("source broke")
	}
	k := min(len(p), r.n)
	clear(p[:k])
	r.n -= k
	return k, nil
}

// A Put whose stream breaks, or whose context is cancelled, leaves the
// previous object (or none), never a truncated one.
func failedPutKeepsOld(t *testing.T, s blob.Store) {
	ctx := context.Background()
	if _, err := s.Put(ctx, key, bytes.NewReader([]byte("old"))); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{10, 7 << 20} { // within the first part, and past it
		if _, err := s.Put(ctx, key, &brokenReader{n: n}); err == nil {
			t.Fatalf("Put from a stream that broke after %d bytes succeeded", n)
		}
		if got := get(t, s, key); string(got) != "old" {
			t.Errorf("after a Put that broke after %d bytes the object is %d bytes, want the old one", n, len(got))
		}
	}
	if _, err := s.Put(ctx, "fresh", &brokenReader{n: 10}); err == nil {
		t.Fatal("Put from a broken stream succeeded")
	}
	if ok, err := s.Exists(ctx, "fresh"); ok || err != nil {
		t.Errorf("a broken Put of a new key left an object: %v, %v", ok, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Put(cctx, key, bytes.NewReader([]byte("cancelled"))); err == nil {
		t.Error("Put with a cancelled context succeeded")
	}
	if got := get(t, s, key); string(got) != "old" {
		t.Errorf("after a cancelled Put the object is %q, want the old one", got)
	}
}

// Puts and Gets of several keys at once, each reading back its own bytes.
func concurrent(t *testing.T, s blob.Store) {
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			k := fmt.Sprintf("c/%d", i)
			data := bytes.Repeat([]byte{byte('a' + i)}, 64<<10+i)
			if _, err := s.Put(ctx, k, bytes.NewReader(data)); err != nil {
				errs <- err
				return
			}
			rc, err := s.Get(ctx, k)
			if err != nil {
				errs <- err
				return
			}
			defer rc.Close()
			if got, err := io.ReadAll(rc); err != nil || !bytes.Equal(got, data) {
				errs <- fmt.Errorf("%s read back %d bytes, %v", k, len(got), err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
