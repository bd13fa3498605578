package s3

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/sbxhq/sbx/internal/blob"
	"github.com/sbxhq/sbx/internal/blob/blobtest"
	"github.com/sbxhq/sbx/internal/blob/s3/s3test"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

func newStore(t *testing.T, srv *s3test.Server, bucket, prefix string) *Store {
	t.Helper()
	st, err := New(context.Background(), Config{
		URL: "s3://" + bucket + "/" + prefix, Endpoint: srv.Endpoint, PathStyle: true,
		AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, PartSize: 5 << 20, MaxRetries: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestParseURL(t *testing.T) {
	for raw, want := range map[string][2]string{
		"s3://b":            {"b", ""},
		"s3://b/":           {"b", ""},
		"s3://b/p/q":        {"b", "p/q/"},
		"s3://my-bucket/x/": {"my-bucket", "x/"},
	} {
		b, p, err := ParseURL(raw)
		if err != nil || b != want[0] || p != want[1] {
			t.Errorf("ParseURL(%q) = %q, %q, %v; want %v", raw, b, p, err, want)
		}
	}
	for _, raw := range []string{"", "b/p", "http://b/p", "s3:///p", "s3://b/../x", "s3://b/p?x=1", "s3://k:s@b/p"} {
		if _, _, err := ParseURL(raw); errdefs.CodeOf(err) != wire.CodeInvalidBlobURL {
			t.Errorf("ParseURL(%q) = %v, want INVALID_BLOB_URL", raw, err)
		}
	}
}

// The blob.Store contract, against a real S3 server: each subtest a fresh
// prefix of one bucket, so prefixes keep stores apart too.
func TestStoreAgainstVersitygw(t *testing.T) {
	srv := s3test.Start(t)
	bucket, n := srv.Bucket(), 0
	blobtest.Run(t, func(t *testing.T) blob.Store {
		n++
		return newStore(t, srv, bucket, fmt.Sprintf("suite/%d", n))
	})
}

// Objects go under the store's prefix in the bucket.
func TestObjectsUnderPrefix(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.Bucket()
	st := newStore(t, srv, bucket, "team/a")
	if _, err := st.Put(context.Background(), "sandboxes/sbx-1/upper.tar.zst", bytes.NewReader([]byte("x"))); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(srv.Root, bucket, "team/a/sandboxes/sbx-1/upper.tar.zst")); err != nil {
		t.Errorf("object not under the prefix: %v", err)
	}
}

// A byte changed on the server's disk: the read fails with BLOB_CORRUPT.
func TestCorruptObjectIsRefused(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.Bucket()
	st := newStore(t, srv, bucket, "")
	ctx := context.Background()
	data := bytes.Repeat([]byte("archive "), 100000)
	if _, err := st.Put(ctx, "k", bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(srv.Root, bucket, "k")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rc, err := st.Get(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(rc)
	rc.Close()
	if errdefs.CodeOf(err) != wire.CodeBlobCorrupt {
		t.Errorf("reading a damaged object: %v, want BLOB_CORRUPT", err)
	}
}

// Wrong credentials and a stopped server give errors that say so.
func TestClearErrors(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.Bucket()
	ctx := context.Background()
	_, err := New(ctx, Config{URL: "s3://" + bucket, Endpoint: srv.Endpoint, PathStyle: true, AccessKey: srv.AccessKey, SecretKey: "wrong", MaxRetries: 1})
	if errdefs.CodeOf(err) != wire.CodeBlobStoreUnavailable || !bytes.Contains([]byte(err.Error()), []byte("credentials")) {
		t.Errorf("wrong secret: %v", err)
	}
	_, err = New(ctx, Config{URL: "s3://no-such-bucket", Endpoint: srv.Endpoint, PathStyle: true, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, MaxRetries: 1})
	if errdefs.CodeOf(err) != wire.CodeInvalidBlobURL {
		t.Errorf("missing bucket: %v", err)
	}
	st := newStore(t, srv, bucket, "")
	srv.Stop()
	_, err = st.Put(ctx, "k", bytes.NewReader([]byte("x")))
	if errdefs.CodeOf(err) != wire.CodeBlobStoreUnavailable || !bytes.Contains([]byte(err.Error()), []byte("unreachable")) {
		t.Errorf("stopped server: %v", err)
	}
	srv.Restart()
	if _, err := st.Put(ctx, "k", bytes.NewReader([]byte("x"))); err != nil {
		t.Errorf("after the server came back: %v", err)
	}
}
