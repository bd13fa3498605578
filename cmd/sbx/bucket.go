package main

import (
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/sdk"
)

// bucketFlags are sbx create's flags for bucket mounts. The keys come from
// the environment, never from flags (which show in ps).
type bucketFlags struct {
	mounts    []string
	endpoint  string
	region    string
	pathStyle bool
}

func addBucketFlags(cmd *cobra.Command) *bucketFlags {
	f := &bucketFlags{}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.mounts, "bucket", nil, "mount an S3 bucket as BUCKET[/PREFIX]:/path or BUCKET[/PREFIX]:/path:ro (repeatable; keys from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, kept on the host)")
	fl.StringVar(&f.endpoint, "bucket-endpoint", "", "S3 endpoint of the --bucket mounts, e.g. https://ACCOUNT.r2.cloudflarestorage.com (env SBX_BUCKET_ENDPOINT)")
	fl.StringVar(&f.region, "bucket-region", "", "S3 region of the --bucket mounts (default us-east-1)")
	fl.BoolVar(&f.pathStyle, "bucket-path-style", false, "address the buckets in the URL path (most self-hosted S3 servers)")
	return f
}

func (f *bucketFlags) applyCreate(req *sdk.CreateSandboxRequest) error {
	if len(f.mounts) == 0 {
		return nil
	}
	endpoint := f.endpoint
	if endpoint == "" {
		endpoint = os.Getenv("SBX_BUCKET_ENDPOINT")
	}
	if endpoint == "" {
		return usagef("--bucket needs --bucket-endpoint (or SBX_BUCKET_ENDPOINT)")
	}
	access, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	if access == "" || secret == "" {
		return usagef("--bucket needs the keys in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	for _, v := range f.mounts {
		parts := strings.Split(v, ":")
		if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" || (len(parts) == 3 && parts[2] != "ro" && parts[2] != "rw") {
			return usagef("--bucket must be BUCKET[/PREFIX]:/path or BUCKET[/PREFIX]:/path:ro, got %q", v)
		}
		bucket, prefix, _ := strings.Cut(parts[0], "/")
		req.Buckets = append(req.Buckets, sdk.BucketMount{
			Bucket: bucket, Prefix: prefix, Path: parts[1], ReadOnly: len(parts) == 3 && parts[2] == "ro",
			Endpoint: endpoint, Region: f.region, PathStyle: f.pathStyle, AccessKeyID: access, SecretAccessKey: secret,
		})
	}
	return nil
}
