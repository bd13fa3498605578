package bucketmount

import (
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/sdk"
)

func TestCheck(t *testing.T) {
	good := sdk.BucketMount{Bucket: "my-bucket", Prefix: "team/a", Path: "/mnt", Endpoint: "https://s3.example.com", AccessKeyID: "ak", SecretAccessKey: "sk"}
	if err := Check(good); err != nil {
		t.Fatalf("Check(good) = %v", err)
	}
	for name, change := range map[string]func(*sdk.BucketMount){
		"bucket":       func(b *sdk.BucketMount) { b.Bucket = "Bad_Bucket" },
		"prefix ..":    func(b *sdk.BucketMount) { b.Prefix = "a/../b" },
		"prefix /":     func(b *sdk.BucketMount) { b.Prefix = "/abs" },
		"endpoint":     func(b *sdk.BucketMount) { b.Endpoint = "ftp://h" },
		"endpoint opt": func(b *sdk.BucketMount) { b.Endpoint = "https://h/?x=,passwd_file=/etc/shadow" },
		"endpoint ,":   func(b *sdk.BucketMount) { b.Endpoint = "https://h,allow_root" },
		"no secret":    func(b *sdk.BucketMount) { b.SecretAccessKey = "" },
		"colon in key": func(b *sdk.BucketMount) { b.AccessKeyID = "a:b" },
		"region":       func(b *sdk.BucketMount) { b.Region = "us,allow_root" },
		"short bucket": func(b *sdk.BucketMount) { b.Bucket = "ab" },
		"long bucket":  func(b *sdk.BucketMount) { b.Bucket = strings.Repeat("a", 64) },
		"long prefix":  func(b *sdk.BucketMount) { b.Prefix = strings.Repeat("p", 513) },
		"long region":  func(b *sdk.BucketMount) { b.Region = strings.Repeat("r", 33) },
	} {
		b := good
		change(&b)
		if err := Check(b); errdefs.CodeOf(err) != sdk.CodeInvalidBucketMount {
			t.Errorf("%s: Check = %v, want INVALID_BUCKET_MOUNT", name, err)
		}
	}
}
