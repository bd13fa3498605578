package s3

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/sbxhq/sbx/internal/blob/s3/s3test"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/sdk"
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
		if _, _, err := ParseURL(raw); errdefs.CodeOf(err) != sdk.CodeInvalidBlobURL {
			t.Errorf("ParseURL(%q) = %v, want INVALID_BLOB_URL", raw, err)
		}
	}
}

// A multipart round trip (three parts), replace, delete, a missing key.
func TestRoundTripAgainstVersitygw(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.Bucket()
	st := newStore(t, srv, bucket, "team/a")
	ctx := context.Background()
	data := make([]byte, 12<<20+123)
	rand.Read(data)
	// A reader that hides its length: the store must stream, not stat.
	n, err := st.Put(ctx, "sandboxes/sbx-1/upper.tar.zst", io.MultiReader(bytes.NewReader(data)))
	if err != nil || n != int64(len(data)) {
		t.Fatalf("Put = %d, %v", n, err)
	}
	if _, err := os.Stat(filepath.Join(srv.Root, bucket, "team/a/sandboxes/sbx-1/upper.tar.zst")); err != nil {
		t.Errorf("object not under the prefix: %v", err)
	}
	if ok, err := st.Exists(ctx, "sandboxes/sbx-1/upper.tar.zst"); !ok || err != nil {
		t.Errorf("Exists = %v, %v", ok, err)
	}
	rc, err := st.Get(ctx, "sandboxes/sbx-1/upper.tar.zst")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Get: %d bytes, %v", len(got), err)
	}
	if _, err := st.Put(ctx, "sandboxes/sbx-1/upper.tar.zst", bytes.NewReader([]byte("new"))); err != nil {
		t.Fatal(err)
	}
	rc, _ = st.Get(ctx, "sandboxes/sbx-1/upper.tar.zst")
	got, err = io.ReadAll(rc)
	rc.Close()
	if string(got) != "new" || err != nil {
		t.Errorf("after replace: %q, %v", got, err)
	}
	if err := st.Delete(ctx, "sandboxes/sbx-1/upper.tar.zst"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := st.Exists(ctx, "sandboxes/sbx-1/upper.tar.zst"); ok {
		t.Error("exists after delete")
	}
	if err := st.Delete(ctx, "sandboxes/sbx-1/upper.tar.zst"); err != nil {
		t.Errorf("deleting a missing blob: %v", err)
	}
	if _, err := st.Get(ctx, "missing"); errdefs.CodeOf(err) != sdk.CodeBlobNotFound {
		t.Errorf("Get missing = %v", err)
	}
	if _, err := st.Put(ctx, "../x", bytes.NewReader(nil)); errdefs.CodeOf(err) != sdk.CodeInvalidBlobKey {
		t.Errorf("Put of a bad key = %v", err)
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
	if errdefs.CodeOf(err) != sdk.CodeBlobCorrupt {
		t.Errorf("reading a damaged object: %v, want BLOB_CORRUPT", err)
	}
}

// Wrong credentials and a stopped server give errors that say so.
func TestClearErrors(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.Bucket()
	ctx := context.Background()
	_, err := New(ctx, Config{URL: "s3://" + bucket, Endpoint: srv.Endpoint, PathStyle: true, AccessKey: srv.AccessKey, SecretKey: "wrong", MaxRetries: 1})
	if errdefs.CodeOf(err) != sdk.CodeBlobStoreUnavailable || !bytes.Contains([]byte(err.Error()), []byte("credentials")) {
		t.Errorf("wrong secret: %v", err)
	}
	_, err = New(ctx, Config{URL: "s3://no-such-bucket", Endpoint: srv.Endpoint, PathStyle: true, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, MaxRetries: 1})
	if errdefs.CodeOf(err) != sdk.CodeInvalidBlobURL {
		t.Errorf("missing bucket: %v", err)
	}
	st := newStore(t, srv, bucket, "")
	srv.Stop()
	_, err = st.Put(ctx, "k", bytes.NewReader([]byte("x")))
	if errdefs.CodeOf(err) != sdk.CodeBlobStoreUnavailable || !bytes.Contains([]byte(err.Error()), []byte("unreachable")) {
		t.Errorf("stopped server: %v", err)
	}
	srv.Restart()
	if _, err := st.Put(ctx, "k", bytes.NewReader([]byte("x"))); err != nil {
		t.Errorf("after the server came back: %v", err)
	}
}
