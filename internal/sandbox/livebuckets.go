package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"

	"github.com/sbxhq/sbx/internal/bucketmount"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Bucket mounts into a running sandbox (class container). Like the mounts
// given at create, s3fs mounts the bucket on the host, in the sandbox's
// bucket directory (so stopping the sandbox unmounts it with the others),
// with the keys in a host file; the mount is then attached inside the
// running sandbox (bucketmount.Inject). A live mount lasts until the
// sandbox stops or it is unmounted; it is not part of the sandbox's spec,
// so a restart does not bring it back (give it at create for that).
//
// Its host directory is named by a hash of the sandbox path, so an
// unmount finds it from the path alone, with no other record.

func liveName(path string) string {
	sum := sha256.Sum256([]byte(path))
	return "live-" + hex.EncodeToString(sum[:8])
}

func (m *Manager) liveDirs(id, path string) (dir, cred string) {
	n := liveName(path)
	return filepath.Join(m.bucketsDir(id), n), filepath.Join(m.dirsOf(id).root, "bucket-"+n+".passwd")
}

// runningContainer returns the host pid of the init of sandbox sb, which
// must be started and of class container. The caller holds its lock.
func (m *Manager) runningContainer(sbID, class string, ref string) (int, error) {
	if class == ClassGVisor {
		return 0, errdefs.Conflict(wire.CodeLiveMountUnsupported, "sandbox %s is of class gvisor, whose kernel takes no new host mounts while it runs: give the bucket at create", ref)
	}
	m.mu.Lock()
	inst := m.instances[sbID]
	m.mu.Unlock()
	if inst == nil || inst.pid == 0 {
		return 0, errdefs.Conflict(wire.CodeSandboxNotStarted, "sandbox %s is not running: start it first, or give the bucket at create", ref)
	}
	return inst.pid, nil
}

// MountBucket mounts b into the running sandbox idOrName at b.Path and
// returns the mount without its keys.
func (m *Manager) MountBucket(ctx context.Context, idOrName string, b wire.BucketMount) (*wire.BucketMount, error) {
	sb, unlock, err := m.lock(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	defer unlock()
	// The checks of a create: the path's rules, the bucket's, and no second
	// mount at a path the spec's buckets use.
	spec := sb.Spec
	req := wire.CreateSandboxRequest{Buckets: append(append([]wire.BucketMount(nil), sb.Spec.Buckets...), b)}
	if err := m.resolveVolumes(ctx, req, &spec); err != nil {
		return nil, err
	}
	if sb.State != wire.StateStarted {
		return nil, errdefs.Conflict(wire.CodeSandboxNotStarted, "sandbox %s is %s: start it first, or give the bucket at create", refOf(sb), sb.State)
	}
	pid, err := m.runningContainer(sb.ID, classOf(sb.Spec), refOf(sb))
	if err != nil {
		return nil, err
	}
	dir, cred := m.liveDirs(sb.ID, b.Path)
	if exists(dir) {
		return nil, errdefs.Conflict(wire.CodeBucketMountExists, "sandbox %s has a bucket mounted at %s already", refOf(sb), b.Path)
	}
	if err := bucketmount.Mount(b, dir, cred); err != nil {
		return nil, err
	}
	if err := bucketmount.Inject(pid, dir, b.Path); err != nil {
		bucketmount.Unmount(dir)
		os.Remove(cred)
		if errdefs.CodeOf(err) == wire.CodeInvalidBucketMount {
			return nil, err
		}
		return nil, errdefs.Internal(err, "mount bucket %s into sandbox %s: %v", b.Bucket, refOf(sb), err)
	}
	m.log.Info("bucket mounted into a running sandbox", "id", sb.ID, "bucket", b.Bucket, "path", b.Path)
	b.AccessKeyID, b.SecretAccessKey = "", "" // write-only
	return &b, nil
}

// UnmountBucket undoes MountBucket: the mount inside, the host mount
// (s3fs exits) and its key file.
func (m *Manager) UnmountBucket(ctx context.Context, idOrName, path string) error {
	sb, unlock, err := m.lock(ctx, idOrName)
	if err != nil {
		return err
	}
	defer unlock()
	dir, cred := m.liveDirs(sb.ID, path)
	if !exists(dir) {
		return errdefs.NotFound(wire.CodeBucketMountNotFound, "sandbox %s has no bucket mounted at %q since it started (mounts given at create stay)", refOf(sb), path)
	}
	if pid, err := m.runningContainer(sb.ID, classOf(sb.Spec), refOf(sb)); err == nil {
		if err := bucketmount.Eject(pid, path); err != nil {
			return errdefs.Internal(err, "unmount bucket at %s in sandbox %s: %v", path, refOf(sb), err)
		}
	}
	if err := bucketmount.Unmount(dir); err != nil {
		return errdefs.Internal(err, "unmount bucket at %s on the host: %v", path, err)
	}
	os.Remove(cred)
	return nil
}

// removeLiveKeys deletes the key files of live mounts (their mounts went
// with the bucket directory).
func (m *Manager) removeLiveKeys(id string) {
	files, _ := filepath.Glob(filepath.Join(m.dirsOf(id).root, "bucket-live-*.passwd"))
	for _, f := range files {
		os.Remove(f)
	}
}
