// Package blob stores large immutable objects (sandbox archives, snapshots'
// layers) away from the sandboxes' own directories: in a local directory
// (Dir) by default, or in S3-compatible storage (package blob/s3).
//
// A Store maps keys to byte streams. Keys are slash-separated paths of
// letters, digits and "._-" ("sandboxes/sbx-abc/upper.tar.zst"), never
// starting with "/" or holding "." or ".." segments, so that they are valid
// object names and file paths alike.
//
// Contract of every implementation:
//   - Put stores the whole stream under key, replacing what was there, and
//     only makes it visible once the stream has been read to the end and is
//     durable: a failed or cancelled Put leaves the previous object (or none),
//     never a truncated one.
//   - Get returns the object's bytes; a missing key is an errdefs NotFound
//     error with code BLOB_NOT_FOUND.
//   - Delete removes the object; a missing key is not an error.
//   - Exists reports whether the key has an object.
package blob

import (
	"context"
	"io"
	"regexp"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Store holds blobs by key. Implementations are safe for concurrent use.
type Store interface {
	// Put stores r's bytes under key and returns how many were stored.
	Put(ctx context.Context, key string, r io.Reader) (int64, error)
	// Get opens the object at key. The caller closes it.
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	// Delete removes key; missing is not an error.
	Delete(ctx context.Context, key string) error
	// Exists reports whether key holds an object.
	Exists(ctx context.Context, key string) (bool, error)
}

var segmentRe = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// CheckKey returns an Invalid error for a key outside the rules above.
func CheckKey(key string) error {
	if key == "" || len(key) > 512 {
		return errdefs.Invalid(wire.CodeInvalidBlobKey, "blob key must be 1 to 512 characters, got %d", len(key))
	}
	for _, seg := range strings.Split(key, "/") {
		if !segmentRe.MatchString(seg) || seg == "." || seg == ".." {
			return errdefs.Invalid(wire.CodeInvalidBlobKey, "invalid blob key %q: use segments of letters, digits and ._- separated by /", key)
		}
	}
	return nil
}
