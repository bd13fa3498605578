package sandbox

import (
	"context"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sbxhq/sbx/internal/bucketmount"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/sdk"
)

// Volumes finds named volumes (package volume) for sandboxes that mount them.
type Volumes interface {
	// Path is the host directory of the volume's filesystem; a missing
	// volume is a VOLUME_NOT_FOUND error.
	Path(name string) (string, error)
	// Get is the volume as the caller in ctx sees it: another team's
	// volume is VOLUME_NOT_FOUND.
	Get(ctx context.Context, name string) (*sdk.Volume, error)
}

// maxVolumesPerSandbox keeps a create request's mounts few.
const maxVolumesPerSandbox = 16

// resolveVolumes checks a create request's volumes: each one exists, at an
// absolute path of its own outside the paths the runtime owns.
func (m *Manager) resolveVolumes(ctx context.Context, req sdk.CreateSandboxRequest, spec *store.Spec) error {
	if len(req.Volumes)+len(req.Buckets) == 0 {
		return nil
	}
	if len(req.Volumes) > 0 && m.cfg.Volumes == nil {
		return errdefs.Invalid(sdk.CodeInvalidVolume, "this daemon has no volumes")
	}
	if len(req.Volumes)+len(req.Buckets) > maxVolumesPerSandbox {
		return errdefs.Invalid(sdk.CodeInvalidVolume, "at most %d volumes and bucket mounts per sandbox, got %d", maxVolumesPerSandbox, len(req.Volumes)+len(req.Buckets))
	}
	seen := map[string]bool{}
	checkPath := func(what, p string) error {
		if c := path.Clean(p); !path.IsAbs(p) || c == "/" || c != p {
			return errdefs.Invalid(sdk.CodeInvalidVolume, "%s: path %q must be a clean absolute path other than /", what, p)
		}
		for _, reserved := range []string{"/proc", "/sys", "/dev", "/.sbx", runtime.RunPath, "/etc/resolv.conf"} {
			if p == reserved || strings.HasPrefix(p, reserved+"/") {
				return errdefs.Invalid(sdk.CodeInvalidVolume, "%s: path %s is reserved", what, p)
			}
		}
		if seen[p] {
			return errdefs.Invalid(sdk.CodeInvalidVolume, "two mounts at %s", p)
		}
		seen[p] = true
		return nil
	}
	for _, v := range req.Volumes {
		if err := checkPath("volume "+strconv.Quote(v.Name), v.Path); err != nil {
			return err
		}
		if _, err := m.cfg.Volumes.Get(ctx, v.Name); err != nil {
			return err
		}
	}
	for _, b := range req.Buckets {
		if err := checkPath("bucket "+strconv.Quote(b.Bucket), b.Path); err != nil {
			return err
		}
		if err := bucketmount.Check(b); err != nil {
			return err
		}
	}
	spec.Volumes = append([]sdk.VolumeMount(nil), req.Volumes...)
	spec.Buckets = append([]sdk.BucketMount(nil), req.Buckets...)
	return nil
}

// bucketsDir holds the host mount points of a sandbox's bucket mounts.
func (m *Manager) bucketsDir(id string) string { return filepath.Join(m.dirsOf(id).root, "buckets") }

// mountBuckets mounts sb's buckets on the host (s3fs) and returns their
// bind mounts; the keys go to files in the sandbox's host directory, which
// the sandbox never sees.
func (m *Manager) mountBuckets(sb *store.Sandbox) ([]runtime.VolumeMount, error) {
	var out []runtime.VolumeMount
	for i, b := range sb.Spec.Buckets {
		dir := filepath.Join(m.bucketsDir(sb.ID), strconv.Itoa(i))
		cred := filepath.Join(m.dirsOf(sb.ID).root, "bucket-"+strconv.Itoa(i)+".passwd")
		bucketmount.Unmount(dir) // left by a crash
		if err := bucketmount.Mount(b, dir, cred); err != nil {
			return nil, err
		}
		out = append(out, runtime.VolumeMount{Source: dir, Destination: b.Path, ReadOnly: b.ReadOnly, NoIdmap: true})
	}
	return out, nil
}

// unmountBuckets undoes mountBuckets; s3fs exits with its mount.
func (m *Manager) unmountBuckets(id string) error {
	m.removeLiveKeys(id) // livebuckets.go
	return bucketmount.UnmountAll(m.bucketsDir(id))
}

// volumeMounts are the instance's bind mounts of sb's volumes.
func (m *Manager) volumeMounts(sb *store.Sandbox) ([]runtime.VolumeMount, error) {
	var out []runtime.VolumeMount
	for _, v := range sb.Spec.Volumes {
		if m.cfg.Volumes == nil {
			return nil, errdefs.Conflict(sdk.CodeVolumeNotFound, "sandbox %s mounts volume %q but this daemon has no volumes", refOf(sb), v.Name)
		}
		src, err := m.cfg.Volumes.Path(v.Name)
		if err != nil {
			return nil, errdefs.Conflict(sdk.CodeVolumeNotFound, "sandbox %s mounts volume %q, which was deleted: create it again to start the sandbox", refOf(sb), v.Name)
		}
		out = append(out, runtime.VolumeMount{Source: src, Destination: v.Path, ReadOnly: v.ReadOnly})
	}
	return out, nil
}

// VolumeUsers returns the ids of the sandboxes, in any state, that mount
// volume name.
func (m *Manager) VolumeUsers(ctx context.Context, name string) ([]string, error) {
	all, err := m.cfg.Store.ListSandboxes(ctx, store.Filter{})
	if err != nil {
		return nil, err
	}
	users := []string{}
	for _, sb := range all {
		for _, v := range sb.Spec.Volumes {
			if v.Name == name {
				users = append(users, sb.ID)
				break
			}
		}
	}
	return users, nil
}
