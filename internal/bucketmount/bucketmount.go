// Package bucketmount mounts S3 buckets (or a prefix of one) into sandboxes
// (Cloudflare's mountBucket): s3fs, a FUSE filesystem, runs on the host with
// the credentials in a host file, and the sandbox gets a bind mount of its
// mount point. The credentials never enter the sandbox: not its files, not
// its environment, not its mount options (s3fs reads them from the file).
//
// Why s3fs (Debian's s3fs package) and not a filesystem of our own on
// hanwen/go-fuse: s3fs has years of S3 semantics behind it (multipart
// writes of large files, renames, directory objects of other tools, caching
// of listings), which a go-fuse filesystem would have to grow; the price is
// one more host package and one host process per mount.
//
// POSIX semantics are s3fs's: a file is uploaded when it is closed or
// flushed (a partial write rewrites the object then), rename is a copy and
// a delete (not atomic; a directory's rename copies every object), there
// are no hard links, and a listing shows what S3 lists (strongly
// consistent on AWS S3 and versitygw). Owners and modes are not kept: every
// file is readable and writable by every user of the sandbox (umask 0).
package bucketmount

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/netfloor"
	"github.com/sbxhq/sbx/wire"
)

// Lengths are checked apart from the patterns: a counted repeat such as
// {0,512} compiles into a program of that many steps, about 400 KB made at
// start-up in every process of this binary, the sandboxes' agents too.
var (
	bucketRe = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]*[a-z0-9]$`)
	prefixRe = regexp.MustCompile(`^[A-Za-z0-9._/-]*$`)
	regionRe = regexp.MustCompile(`^[a-z0-9-]+$`)
)

// Check validates a mount request (everything but the path, which the
// caller checks like a volume's).
func Check(b wire.BucketMount) error {
	if len(b.Bucket) < 3 || len(b.Bucket) > 63 || !bucketRe.MatchString(b.Bucket) {
		return errdefs.Invalid(wire.CodeInvalidBucketMount, "bucket %q is not a valid S3 bucket name", b.Bucket)
	}
	if len(b.Prefix) > 512 || !prefixRe.MatchString(b.Prefix) || strings.Contains(b.Prefix, "..") || strings.HasPrefix(b.Prefix, "/") {
		return errdefs.Invalid(wire.CodeInvalidBucketMount, "bucket prefix %q: use letters, digits and ._-/, not starting with /", b.Prefix)
	}
	u, err := url.Parse(b.Endpoint)
	// No commas: s3fs takes its options as one comma-separated list.
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" ||
		u.User != nil || strings.ContainsAny(b.Endpoint, ", \t\n") {
		return errdefs.Invalid(wire.CodeInvalidBucketMount, "bucket endpoint %q must look like https://host[:port]", b.Endpoint)
	}
	if err := netfloor.Default().CheckURL(b.Endpoint); err != nil {
		return errdefs.Invalid(wire.CodeInvalidBucketMount, "bucket endpoint %q: %v", b.Endpoint, err)
	}
	if b.AccessKeyID == "" || b.SecretAccessKey == "" || strings.ContainsAny(b.AccessKeyID+b.SecretAccessKey, ":\n\r") {
		return errdefs.Invalid(wire.CodeInvalidBucketMount, "bucket %q needs accessKeyId and secretAccessKey (without ':' or newlines)", b.Bucket)
	}
	if b.Region != "" && (len(b.Region) > 32 || !regionRe.MatchString(b.Region)) {
		return errdefs.Invalid(wire.CodeInvalidBucketMount, "bucket region %q is not a region name", b.Region)
	}
	if _, err := exec.LookPath("s3fs"); err != nil {
		return errdefs.Unavailable(wire.CodeInvalidBucketMount, "bucket mounts need s3fs on the host (Debian: apt-get install s3fs)")
	}
	return nil
}

// Mount mounts b at dir (made if missing), with its credentials in
// credFile (host only, 0600), and waits until the mount is there.
//
// s3fs runs as root on the host's network, so every address the endpoint's
// name has now must be above the operator's network floor (package
// netfloor). s3fs resolves the name again itself: a name whose owner
// changes its answers between the two (DNS rebinding) is not caught here.
func Mount(b wire.BucketMount, dir, credFile string) error {
	if err := checkEndpoint(b.Endpoint); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(credFile, []byte(b.AccessKeyID+":"+b.SecretAccessKey+"\n"), 0o600); err != nil {
		return err
	}
	source := b.Bucket
	if p := strings.Trim(b.Prefix, "/"); p != "" {
		source += ":/" + p
	}
	opts := []string{
		"url=" + strings.TrimSuffix(b.Endpoint, "/"),
		"passwd_file=" + credFile,
		"allow_other", "umask=0000", "mp_umask=0000", // sandboxes run as other host ids
		"nonempty",
		"retries=3", "connect_timeout=10", "readwrite_timeout=30",
	}
	if b.PathStyle {
		opts = append(opts, "use_path_request_style")
	}
	if b.Region != "" {
		opts = append(opts, "endpoint="+b.Region)
	}
	if b.ReadOnly {
		opts = append(opts, "ro")
	}
	// s3fs checks the bucket, then goes to the background; its exit status
	// says whether it could.
	out, err := exec.Command("s3fs", source, dir, "-o", strings.Join(opts, ",")).CombinedOutput()
	if err != nil {
		os.Remove(credFile)
		return errdefs.Unavailable(wire.CodeInvalidBucketMount, "mount bucket %s: s3fs: %v: %s", b.Bucket, err, strings.TrimSpace(string(out)))
	}
	deadline := time.Now().Add(10 * time.Second)
	for !mounted(dir) {
		if time.Now().After(deadline) {
			Unmount(dir)
			return errdefs.Unavailable(wire.CodeInvalidBucketMount, "mount bucket %s: s3fs did not mount it within 10s", b.Bucket)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// Unmount unmounts dir (s3fs then exits) and removes it. A missing mount is
// not an error.
func Unmount(dir string) error {
	if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmount bucket at %s: %w", dir, err)
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// UnmountAll unmounts every bucket mount under root and removes root.
func UnmountAll(root string) error {
	entries, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	var errs []error
	for _, e := range entries {
		errs = append(errs, Unmount(filepath.Join(root, e.Name())))
	}
	if err := os.Remove(root); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func mounted(path string) bool {
	var st, parent unix.Stat_t
	if unix.Stat(path, &st) != nil || unix.Stat(filepath.Dir(path), &parent) != nil {
		return false
	}
	return st.Dev != parent.Dev
}

// checkEndpoint resolves the endpoint's host and refuses it when an
// address of it is below the network floor.
func checkEndpoint(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil {
		return errdefs.Invalid(wire.CodeInvalidBucketMount, "bucket endpoint %q: %v", endpoint, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := netfloor.Default().CheckHost(ctx, u.Hostname()); err != nil {
		return errdefs.Invalid(wire.CodeInvalidBucketMount, "bucket endpoint %q: %v", endpoint, err)
	}
	return nil
}
