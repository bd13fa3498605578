// Package s3 is a blob.Store in an S3-compatible bucket (AWS S3, R2,
// versitygw, Ceph RGW, …), so that archives written by one daemon can be
// restored by another.
//
// It uses minio-go (Apache-2.0): one small module with streaming multipart
// upload of a stream of unknown length (one part buffered at a time), retries
// with exponential backoff and jitter on every request, and path-style or
// virtual-host addressing. aws-sdk-go-v2 would pull in a dozen modules and its
// streaming uploader (feature/s3/manager) is deprecated for a v0
// transfermanager.
//
// Integrity: every Put computes the SHA-256 and size of the stream and stores
// them in a small sidecar object "<key>.sha256" once the data object is
// complete. Get verifies the bytes against it as they are read: the final Read
// returns a BLOB_CORRUPT error instead of io.EOF when they differ, so a reader
// that consumes the stream to the end never takes damaged bytes for good ones.
// A crash between the data object and its sidecar leaves a mismatch that Get
// refuses, never wrong bytes.
package s3

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/sbxhq/sbx/internal/blob"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// DefaultPartSize is the multipart part size: the memory one upload holds.
const DefaultPartSize = 16 << 20

// Config says where the bucket is and how to reach it.
type Config struct {
	URL          string // s3://bucket/optional/prefix
	Endpoint     string // http(s)://host:port; empty: AWS S3 for Region
	Region       string // default us-east-1
	PathStyle    bool   // bucket in the path, not the host name (most self-hosted servers)
	AccessKey    string
	SecretKey    string
	SessionToken string
	PartSize     uint64 // default DefaultPartSize
	MaxRetries   int    // per request; default 10 (minio-go's)
}

// Store is a blob.Store in one bucket under one prefix.
type Store struct {
	client   *minio.Client
	bucket   string
	prefix   string // "" or ending in "/"
	endpoint string // for messages
	partSize uint64
}

var _ blob.Store = (*Store)(nil)

// ParseURL splits s3://bucket/prefix into bucket and prefix ("" or ending in "/").
func ParseURL(raw string) (bucket, prefix string, err error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "s3" || u.Host == "" || u.RawQuery != "" || u.User != nil {
		return "", "", errdefs.Invalid(wire.CodeInvalidBlobURL, "blob URL %q must look like s3://bucket or s3://bucket/prefix", raw)
	}
	prefix = strings.Trim(u.Path, "/")
	if prefix != "" {
		if err := blob.CheckKey(prefix); err != nil {
			return "", "", errdefs.Invalid(wire.CodeInvalidBlobURL, "blob URL %q: the prefix must be segments of letters, digits and ._- separated by /", raw)
		}
		prefix += "/"
	}
	return u.Host, prefix, nil
}

// New connects to the bucket and checks that it exists and the credentials
// work, so that a wrong setting fails at startup and not at the first archive.
func New(ctx context.Context, cfg Config) (*Store, error) {
	bucket, prefix, err := ParseURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	region := cfg.Region
	if region == "" {
		region = "us-east-1"
	}
	host, secure := "s3."+region+".amazonaws.com", true
	if cfg.Endpoint != "" {
		u, err := url.Parse(cfg.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return nil, errdefs.Invalid(wire.CodeInvalidBlobURL, "S3 endpoint %q must look like https://host[:port]", cfg.Endpoint)
		}
		host, secure = u.Host, u.Scheme == "https"
	}
	if (cfg.AccessKey == "") != (cfg.SecretKey == "") {
		return nil, errdefs.Invalid(wire.CodeInvalidBlobURL, "S3 credentials need both an access key and a secret key")
	}
	lookup := minio.BucketLookupAuto
	if cfg.PathStyle {
		lookup = minio.BucketLookupPath
	}
	retries := cfg.MaxRetries
	if retries <= 0 {
		retries = minio.MaxRetry
	}
	client, err := minio.New(host, &minio.Options{
		Creds:        credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, cfg.SessionToken),
		Secure:       secure,
		Region:       region,
		BucketLookup: lookup,
		MaxRetries:   retries,
	})
	if err != nil {
		return nil, errdefs.Invalid(wire.CodeInvalidBlobURL, "S3 client for %s: %v", host, err)
	}
	s := &Store{client: client, bucket: bucket, prefix: prefix, endpoint: host, partSize: cfg.PartSize}
	if s.partSize == 0 {
		s.partSize = DefaultPartSize
	}
	ok, err := client.BucketExists(ctx, bucket)
	if err != nil {
		return nil, s.fail(err, "check bucket %s", bucket)
	}
	if !ok {
		return nil, errdefs.Invalid(wire.CodeInvalidBlobURL, "bucket %q does not exist at %s: create it first", bucket, host)
	}
	return s, nil
}

// Shared says that other hosts read this store too (sandbox.SharedBlobs):
// the daemon then keeps image and snapshot layers in it as well.
func (s *Store) Shared() bool { return true }

// String names the store for logs.
func (s *Store) String() string {
	return fmt.Sprintf("s3://%s/%s at %s", s.bucket, s.prefix, s.endpoint)
}

func (s *Store) object(key string) (string, error) {
	if err := blob.CheckKey(key); err != nil {
		return "", err
	}
	return s.prefix + key, nil
}

func sidecar(object string) string { return object + ".sha256" }

// Put streams r into a multipart upload (one part in memory at a time),
// then records its digest in the sidecar object.
func (s *Store) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	obj, err := s.object(key)
	if err != nil {
		return 0, err
	}
	h := sha256.New()
	cr := &countingReader{r: io.TeeReader(r, h)}
	_, err = s.client.PutObject(ctx, s.bucket, obj, cr, -1, minio.PutObjectOptions{
		PartSize:    s.partSize,
		ContentType: "application/octet-stream",
	})
	if err != nil {
		return 0, s.fail(err, "upload blob %s", key)
	}
	sum := hex.EncodeToString(h.Sum(nil)) + " " + strconv.FormatInt(cr.n, 10)
	if _, err := s.client.PutObject(ctx, s.bucket, sidecar(obj), strings.NewReader(sum), int64(len(sum)), minio.PutObjectOptions{
		ContentType: "text/plain", DisableMultipart: true,
	}); err != nil {
		return 0, s.fail(err, "upload checksum of blob %s", key)
	}
	return cr.n, nil
}

// Get opens the object; the returned reader verifies it against its
// sidecar as it is read.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	obj, err := s.object(key)
	if err != nil {
		return nil, err
	}
	want, size, err := s.readSum(ctx, key, obj)
	if err != nil {
		return nil, err
	}
	o, err := s.client.GetObject(ctx, s.bucket, obj, minio.GetObjectOptions{})
	if err != nil {
		return nil, s.fail(err, "download blob %s", key)
	}
	// GetObject is lazy: Stat makes the request, so a missing object is an
	// error here and not at the first Read.
	if _, err := o.Stat(); err != nil {
		o.Close()
		return nil, s.fail(err, "download blob %s", key)
	}
	return &verifyingReader{obj: o, h: sha256.New(), want: want, size: size, key: key, s: s}, nil
}

func (s *Store) readSum(ctx context.Context, key, obj string) (string, int64, error) {
	o, err := s.client.GetObject(ctx, s.bucket, sidecar(obj), minio.GetObjectOptions{})
	if err != nil {
		return "", 0, s.fail(err, "download checksum of blob %s", key)
	}
	defer o.Close()
	b, err := io.ReadAll(io.LimitReader(o, 200))
	if err != nil {
		if isNotFound(err) {
			// The data object alone, without its checksum, is not a blob.
			return "", 0, errdefs.NotFound(wire.CodeBlobNotFound, "blob %s not found in %s", key, s)
		}
		return "", 0, s.fail(err, "download checksum of blob %s", key)
	}
	sum, sizeText, ok := strings.Cut(strings.TrimSpace(string(b)), " ")
	size, perr := strconv.ParseInt(sizeText, 10, 64)
	if !ok || len(sum) != 64 || perr != nil {
		return "", 0, corrupt("checksum of blob %s is unreadable: %q", key, b)
	}
	return sum, size, nil
}

// Delete removes the object and its sidecar (the sidecar first: without it
// a leftover data object reads as missing).
func (s *Store) Delete(ctx context.Context, key string) error {
	obj, err := s.object(key)
	if err != nil {
		return err
	}
	for _, name := range []string{sidecar(obj), obj} {
		if err := s.client.RemoveObject(ctx, s.bucket, name, minio.RemoveObjectOptions{}); err != nil && !isNotFound(err) {
			return s.fail(err, "delete blob %s", key)
		}
	}
	return nil
}

// Exists reports whether the key has a complete object (data and sidecar).
func (s *Store) Exists(ctx context.Context, key string) (bool, error) {
	obj, err := s.object(key)
	if err != nil {
		return false, err
	}
	for _, name := range []string{obj, sidecar(obj)} {
		if _, err := s.client.StatObject(ctx, s.bucket, name, minio.StatObjectOptions{}); err != nil {
			if isNotFound(err) {
				return false, nil
			}
			return false, s.fail(err, "stat blob %s", key)
		}
	}
	return true, nil
}

func isNotFound(err error) bool {
	r := minio.ToErrorResponse(err)
	return r.Code == "NoSuchKey" || r.StatusCode == http.StatusNotFound && r.Code != "NoSuchBucket"
}

// fail turns a client error into one that says what failed and what to do.
func (s *Store) fail(err error, format string, args ...any) error {
	what := fmt.Sprintf(format, args...)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	r := minio.ToErrorResponse(err)
	switch {
	case r.Code == "NoSuchKey":
		return errdefs.NotFound(wire.CodeBlobNotFound, "%s: not found in %s", what, s)
	case r.Code == "NoSuchBucket":
		return errdefs.Unavailable(wire.CodeBlobStoreUnavailable, "%s: bucket %s does not exist at %s", what, s.bucket, s.endpoint)
	case r.StatusCode == http.StatusForbidden || r.Code == "AccessDenied" || r.Code == "InvalidAccessKeyId" || r.Code == "SignatureDoesNotMatch":
		return errdefs.Unavailable(wire.CodeBlobStoreUnavailable, "%s: S3 at %s refused the credentials (%s): check --blob-s3-access-key/secret", what, s.endpoint, r.Code)
	case r.Code != "":
		return errdefs.Unavailable(wire.CodeBlobStoreUnavailable, "%s: S3 at %s answered %s: %s", what, s.endpoint, r.Code, r.Message)
	}
	// No S3 answer at all: connection refused, reset, DNS, TLS.
	return errdefs.Unavailable(wire.CodeBlobStoreUnavailable, "%s: S3 at %s is unreachable (%v); try again once it is back", what, s.endpoint, err)
}

// corrupt reports a blob whose bytes are not the ones written.
func corrupt(format string, args ...any) error {
	return &errdefs.Error{Kind: errdefs.KindInternal, Code: wire.CodeBlobCorrupt, Message: fmt.Sprintf(format, args...)}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// verifyingReader hashes what it returns and turns the final io.EOF into
// BLOB_CORRUPT when size or digest differ from the sidecar.
type verifyingReader struct {
	obj  *minio.Object
	h    hash.Hash
	n    int64
	want string
	size int64
	key  string
	s    *Store
}

func (v *verifyingReader) Read(p []byte) (int, error) {
	n, err := v.obj.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	if v.n > v.size {
		return n, corrupt("blob %s is longer than the %d bytes written: it was changed or damaged", v.key, v.size)
	}
	if errors.Is(err, io.EOF) {
		if got := hex.EncodeToString(v.h.Sum(nil)); v.n != v.size || got != v.want {
			return n, corrupt("blob %s reads back as %d bytes with SHA-256 %s, written as %d bytes with %s: it was changed or damaged", v.key, v.n, got, v.size, v.want)
		}
		return n, io.EOF
	}
	if err != nil {
		return n, v.s.fail(err, "download blob %s", v.key)
	}
	return n, nil
}

func (v *verifyingReader) Close() error { return v.obj.Close() }
