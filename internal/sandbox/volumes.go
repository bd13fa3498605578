package sandbox

import (
	"context"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/bucketmount"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Volumes finds named volumes (package volume) for sandboxes that mount
// them. A sandbox records its volumes' ids at create (Spec.VolumeIDs) and
// mounts those at every start, checking the team each time: a volume
// deleted and made again under its name, by any team, is never mounted.
type Volumes interface {
	// Resolve is the id of team's volume name; VOLUME_NOT_FOUND when team
	// has none.
	Resolve(team, name string) (string, error)
	// Path is the host directory of volume id's filesystem if team owns
	// it; else, or once it is deleted, VOLUME_NOT_FOUND.
	Path(team, id string) (string, error)
	// ID is the id of the volume name the caller in ctx sees.
	ID(ctx context.Context, name string) (string, error)
}

// maxVolumesPerSandbox keeps a create request's mounts few.
const maxVolumesPerSandbox = 16

// resolveVolumes checks a create request's volumes: each one exists, at an
// absolute path of its own outside the paths the runtime owns.
func (m *Manager) resolveVolumes(ctx context.Context, req wire.CreateSandboxRequest, spec *store.Spec) error {
	if len(req.Volumes)+len(req.Buckets) == 0 {
		return nil
	}
	if len(req.Volumes) > 0 && m.cfg.Volumes == nil {
		return errdefs.Invalid(wire.CodeInvalidVolume, "this daemon has no volumes")
	}
	if len(req.Volumes)+len(req.Buckets) > maxVolumesPerSandbox {
		return errdefs.Invalid(wire.CodeInvalidVolume, "at most %d volumes and bucket mounts per sandbox, got %d", maxVolumesPerSandbox, len(req.Volumes)+len(req.Buckets))
	}
	seen := map[string]bool{}
	checkPath := func(what, p string) error {
		if c := path.Clean(p); !path.IsAbs(p) || c == "/" || c != p {
			return errdefs.Invalid(wire.CodeInvalidVolume, "%s: path %q must be a clean absolute path other than /", what, p)
		}
		for _, reserved := range []string{"/proc", "/sys", "/dev", "/.sbx", runtime.RunPath, "/etc/resolv.conf"} {
			if p == reserved || strings.HasPrefix(p, reserved+"/") {
				return errdefs.Invalid(wire.CodeInvalidVolume, "%s: path %s is reserved", what, p)
			}
		}
		if seen[p] {
			return errdefs.Invalid(wire.CodeInvalidVolume, "two mounts at %s", p)
		}
		seen[p] = true
		return nil
	}
	var ids []string
	for _, v := range req.Volumes {
		if err := checkPath("volume "+strconv.Quote(v.Name), v.Path); err != nil {
			return err
		}
		// The new sandbox's team (the store's teamFor): its volumes are
		// that team's, whoever the caller.
		id, err := m.cfg.Volumes.Resolve(auth.TeamOf(ctx), v.Name)
		if err != nil {
			return err
		}
		ids = append(ids, id)
	}
	for _, b := range req.Buckets {
		if err := checkPath("bucket "+strconv.Quote(b.Bucket), b.Path); err != nil {
			return err
		}
		if err := bucketmount.Check(b); err != nil {
			return err
		}
	}
	spec.Volumes = append([]wire.VolumeMount(nil), req.Volumes...)
	spec.VolumeIDs = ids
	spec.Buckets = append([]wire.BucketMount(nil), req.Buckets...)
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
	for i, v := range sb.Spec.Volumes {
		if m.cfg.Volumes == nil {
			return nil, errdefs.Conflict(wire.CodeVolumeNotFound, "sandbox %s mounts volume %q but this daemon has no volumes", refOf(sb), v.Name)
		}
		id, err := volumeID(sb, i)
		if err != nil {
			return nil, err
		}
		src, err := m.cfg.Volumes.Path(teamOf(sb), id)
		if err != nil {
			return nil, errdefs.Conflict(wire.CodeVolumeNotFound, "sandbox %s mounts volume %q (%s), which was deleted: a volume made again under that name is another volume; create a new sandbox to mount it", refOf(sb), v.Name, id)
		}
		out = append(out, runtime.VolumeMount{Source: src, Destination: v.Path, ReadOnly: v.ReadOnly})
	}
	return out, nil
}

// volumeID is the id of sb's i-th volume. A record made before ids has
// none: it is the volume of that name in sb's own team at the time of the
// upgrade (volumes made then have their names as ids).
func volumeID(sb *store.Sandbox, i int) (string, error) {
	if len(sb.Spec.VolumeIDs) == 0 {
		return sb.Spec.Volumes[i].Name, nil
	}
	if i >= len(sb.Spec.VolumeIDs) {
		return "", errdefs.Internal(nil, "sandbox %s records %d volume ids for %d volumes", sb.ID, len(sb.Spec.VolumeIDs), len(sb.Spec.Volumes))
	}
	return sb.Spec.VolumeIDs[i], nil
}

// teamOf is sb's team ("" in records made before teams: default).
func teamOf(sb *store.Sandbox) string {
	if sb.Team == "" {
		return auth.DefaultTeam
	}
	return sb.Team
}

// VolumeUsers returns the ids of the sandboxes, in any state, that mount
// the volume name the caller in ctx sees. Only its own team's sandboxes
// can mount it (Volumes.Path checks), so the list names no other team's.
func (m *Manager) VolumeUsers(ctx context.Context, name string) ([]string, error) {
	id, err := m.cfg.Volumes.ID(ctx, name)
	if err != nil {
		return nil, err
	}
	all, err := m.cfg.Store.ListSandboxes(ctx, store.Filter{})
	if err != nil {
		return nil, err
	}
	users := []string{}
	for _, sb := range all {
		for i := range sb.Spec.Volumes {
			if vid, _ := volumeID(sb, i); vid == id {
				users = append(users, sb.ID)
				break
			}
		}
	}
	return users, nil
}
