package bucketmount

import (
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

func TestCheck(t *testing.T) {
	good := wire.BucketMount{Bucket: "my-bucket", Prefix: "team/a", Path: "/mnt", Endpoint: "https://s3.example.com", AccessKeyID: "ak", SecretAccessKey: "sk"}
	if err := Check(good); err != nil {
		t.Fatalf("Check(good) = %v", err)
	}
	for name, change := range map[string]func(*wire.BucketMount){
		"bucket":       func(b *wire.BucketMount) { b.Bucket = "Bad_Bucket" },
		"prefix ..":    func(b *wire.BucketMount) { b.Prefix = "a/../b" },
		"prefix /":     func(b *wire.BucketMount) { b.Prefix = "/abs" },
		"endpoint":     func(b *wire.BucketMount) { b.Endpoint = "ftp://h" },
		"endpoint opt": func(b *wire.BucketMount) { b.Endpoint = "https://h/?x=,passwd_file=/etc/shadow" },
		"endpoint ,":   func(b *wire.BucketMount) { b.Endpoint = "https://h,allow_root" },
		"no secret":    func(b *wire.BucketMount) { b.SecretAccessKey = "" },
		"colon in key": func(b *wire.BucketMount) { b.AccessKeyID = "a:b" },
		"region":       func(b *wire.BucketMount) { b.Region = "us,allow_root" },
		"metadata":     func(b *wire.BucketMount) { b.Endpoint = "http://169.254.99.1" },
		"loopback":     func(b *wire.BucketMount) { b.Endpoint = "http://127.0.0.1:7070" },
		"localhost":    func(b *wire.BucketMount) { b.Endpoint = "http://localhost:7070" },
		"lan":          func(b *wire.BucketMount) { b.Endpoint = "https://10.0.0.5" },
		"short bucket": func(b *wire.BucketMount) { b.Bucket = "ab" },
		"long bucket":  func(b *wire.BucketMount) { b.Bucket = strings.Repeat("a", 64) },
		"long prefix":  func(b *wire.BucketMount) { b.Prefix = strings.Repeat("p", 513) },
		"long region":  func(b *wire.BucketMount) { b.Region = strings.Repeat("r", 33) },
	} {
		b := good
		change(&b)
		if err := Check(b); errdefs.CodeOf(err) != wire.CodeInvalidBucketMount {
			t.Errorf("%s: Check = %v, want INVALID_BUCKET_MOUNT", name, err)
		}
	}
}

// TestMountChecksResolvedEndpoint: Mount resolves the endpoint's name and
// refuses it when it leads below the network floor (s3fs would reach it
// as root on the host's network).
func TestMountChecksResolvedEndpoint(t *testing.T) {
	b := wire.BucketMount{Bucket: "my-bucket", Endpoint: "http://localhost:7070", AccessKeyID: "ak", SecretAccessKey: "sk"}
	dir := t.TempDir()
	err := Mount(b, dir+"/mnt", dir+"/cred")
	if errdefs.CodeOf(err) != wire.CodeInvalidBucketMount || !strings.Contains(err.Error(), "network floor") {
		t.Fatalf("Mount to localhost = %v, want INVALID_BUCKET_MOUNT below the floor", err)
	}
}
