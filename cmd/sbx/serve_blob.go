package main

import (
	"bufio"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/internal/daemon"
)

// blobFlags are the flags of sbx serve that put archives in an S3 bucket
// instead of --blob-dir.
type blobFlags struct {
	url, endpoint, region, credsFile string
	accessKey, secretKey             string
	pathStyle                        bool
}

func (f *blobFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.url, "blob-url", "", "s3://BUCKET[/PREFIX]: keep archives in this S3 bucket instead of --blob-dir, so any daemon pointing at it can restore them (env SBX_BLOB_URL)")
	fl.StringVar(&f.endpoint, "blob-s3-endpoint", "", "S3 endpoint URL, e.g. https://ACCOUNT.r2.cloudflarestorage.com or http://127.0.0.1:7070 (env SBX_BLOB_S3_ENDPOINT; default AWS S3 in --blob-s3-region)")
	fl.StringVar(&f.region, "blob-s3-region", "", "S3 region (env SBX_BLOB_S3_REGION, default us-east-1)")
	fl.BoolVar(&f.pathStyle, "blob-s3-path-style", false, "address the bucket in the URL path, not the host name (most self-hosted S3 servers; env SBX_BLOB_S3_PATH_STYLE)")
	fl.StringVar(&f.accessKey, "blob-s3-access-key", "", "S3 access key (env SBX_BLOB_S3_ACCESS_KEY or AWS_ACCESS_KEY_ID)")
	fl.StringVar(&f.secretKey, "blob-s3-secret-key", "", "S3 secret key (env SBX_BLOB_S3_SECRET_KEY or AWS_SECRET_ACCESS_KEY; prefer the environment or --blob-s3-credentials-file, flags show in ps)")
	fl.StringVar(&f.credsFile, "blob-s3-credentials-file", "", "file with the S3 keys as lines aws_access_key_id = … and aws_secret_access_key = … (an AWS credentials file works; env SBX_BLOB_S3_CREDENTIALS_FILE)")
}

func (f *blobFlags) apply(cmd *cobra.Command, cfg *daemon.Config) error {
	c := &cfg.BlobS3
	c.URL = setting(cmd, "blob-url", f.url, "SBX_BLOB_URL")
	if c.URL == "" {
		return nil
	}
	if cfg.BlobDir != "" {
		return usagef("--blob-url and --blob-dir exclude each other: archives go to one place")
	}
	c.Endpoint = setting(cmd, "blob-s3-endpoint", f.endpoint, "SBX_BLOB_S3_ENDPOINT")
	c.Region = setting(cmd, "blob-s3-region", f.region, "SBX_BLOB_S3_REGION")
	c.PathStyle = f.pathStyle || os.Getenv("SBX_BLOB_S3_PATH_STYLE") == "true" || os.Getenv("SBX_BLOB_S3_PATH_STYLE") == "1"
	c.AccessKey = setting(cmd, "blob-s3-access-key", f.accessKey, "SBX_BLOB_S3_ACCESS_KEY")
	c.SecretKey = setting(cmd, "blob-s3-secret-key", f.secretKey, "SBX_BLOB_S3_SECRET_KEY")
	if file := setting(cmd, "blob-s3-credentials-file", f.credsFile, "SBX_BLOB_S3_CREDENTIALS_FILE"); file != "" && c.AccessKey == "" {
		var err error
		if c.AccessKey, c.SecretKey, err = readS3Credentials(file); err != nil {
			return err
		}
	}
	if c.AccessKey == "" {
		c.AccessKey, c.SecretKey = os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
		c.SessionToken = os.Getenv("AWS_SESSION_TOKEN")
	}
	return nil
}

// readS3Credentials reads the first aws_access_key_id and
// aws_secret_access_key (or access_key / secret_key) of a file.
func readS3Credentials(path string) (access, secret string, err error) {
	fh, err := os.Open(path)
	if err != nil {
		return "", "", usagef("--blob-s3-credentials-file: %v", err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		switch v = strings.TrimSpace(v); strings.TrimSpace(k) {
		case "aws_access_key_id", "access_key":
			if access == "" {
				access = v
			}
		case "aws_secret_access_key", "secret_key":
			if secret == "" {
				secret = v
			}
		}
	}
	if access == "" || secret == "" {
		return "", "", usagef("--blob-s3-credentials-file %s must hold aws_access_key_id = … and aws_secret_access_key = …", path)
	}
	return access, secret, nil
}
