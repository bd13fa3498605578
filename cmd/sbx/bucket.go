package main

import (
	"fmt"
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
	for _, v := range f.mounts {
		b, err := f.parse(v)
		if err != nil {
			return err
		}
		req.Buckets = append(req.Buckets, b)
	}
	return nil
}

// parse makes a mount of BUCKET[/PREFIX]:/path[:ro|:rw], with the endpoint
// of the flags (or SBX_BUCKET_ENDPOINT) and the keys of the environment.
func (f *bucketFlags) parse(v string) (sdk.BucketMount, error) {
	endpoint := f.endpoint
	if endpoint == "" {
		endpoint = os.Getenv("SBX_BUCKET_ENDPOINT")
	}
	if endpoint == "" {
		return sdk.BucketMount{}, usagef("a bucket mount needs --bucket-endpoint (or SBX_BUCKET_ENDPOINT)")
	}
	access, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	if access == "" || secret == "" {
		return sdk.BucketMount{}, usagef("a bucket mount needs the keys in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	parts := strings.Split(v, ":")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" || (len(parts) == 3 && parts[2] != "ro" && parts[2] != "rw") {
		return sdk.BucketMount{}, usagef("a bucket mount must be BUCKET[/PREFIX]:/path or BUCKET[/PREFIX]:/path:ro, got %q", v)
	}
	bucket, prefix, _ := strings.Cut(parts[0], "/")
	return sdk.BucketMount{
		Bucket: bucket, Prefix: prefix, Path: parts[1], ReadOnly: len(parts) == 3 && parts[2] == "ro",
		Endpoint: endpoint, Region: f.region, PathStyle: f.pathStyle, AccessKeyID: access, SecretAccessKey: secret,
	}, nil
}

func newBucketCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bucket COMMAND",
		Short: "Mount S3 buckets into running sandboxes and unmount them",
		Long: `Mount an S3 bucket (or a prefix of it) into a running sandbox of class container,
as sbx create --bucket does at create. s3fs mounts it on the host with the keys
(from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) in a host file: they never
enter the sandbox. The mount lasts until the sandbox stops or is unmounted;
give it at create to have it at every start. Class gvisor takes buckets only
at create.`,
		Example: `  AWS_ACCESS_KEY_ID=… AWS_SECRET_ACCESS_KEY=… sbx bucket mount box data/team:/mnt/data --bucket-endpoint https://s3.example.com
  sbx bucket unmount box /mnt/data`,
		Args: noSubcommand,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newBucketMountCmd(g), newBucketUnmountCmd(g))
	return cmd
}

func newBucketMountCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "mount SANDBOX BUCKET[/PREFIX]:/path[:ro]",
		Short:   "Mount a bucket into a running sandbox",
		Example: `  sbx bucket mount box data:/mnt/data:ro --bucket-endpoint http://127.0.0.1:7070 --bucket-path-style`,
		Args:    exactArgs(2, "SANDBOX and BUCKET[/PREFIX]:/path[:ro]"),
	}
	f := &bucketFlags{}
	fl := cmd.Flags()
	fl.StringVar(&f.endpoint, "bucket-endpoint", "", "S3 endpoint, e.g. https://ACCOUNT.r2.cloudflarestorage.com (env SBX_BUCKET_ENDPOINT)")
	fl.StringVar(&f.region, "bucket-region", "", "S3 region (default us-east-1)")
	fl.BoolVar(&f.pathStyle, "bucket-path-style", false, "address the bucket in the URL path (most self-hosted S3 servers)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		b, err := f.parse(args[1])
		if err != nil {
			return err
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		if _, err := c.MountBucket(cmd.Context(), args[0], b); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "mounted bucket %s at %s\n", strings.TrimSuffix(b.Bucket+"/"+b.Prefix, "/"), b.Path)
		return nil
	}
	return cmd
}

func newBucketUnmountCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:     "unmount SANDBOX PATH",
		Aliases: []string{"umount"},
		Short:   "Unmount a bucket mounted with sbx bucket mount",
		Example: `  sbx bucket unmount box /mnt/data`,
		Args:    exactArgs(2, "SANDBOX and PATH"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			return c.UnmountBucket(cmd.Context(), args[0], args[1])
		},
	}
}
