package sandbox

import (
	"context"
	"path"
	"strings"

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
}

// maxVolumesPerSandbox keeps a create request's mounts few.
const maxVolumesPerSandbox = 16

// resolveVolumes checks a create request's volumes: each one exists, at an
// absolute path of its own outside the paths the runtime owns.
func (m *Manager) resolveVolumes(req sdk.CreateSandboxRequest, spec *store.Spec) error {
	if len(req.Volumes) == 0 {
		return nil
	}
	if m.cfg.Volumes == nil {
		return errdefs.Invalid(sdk.CodeInvalidVolume, "this daemon has no volumes")
	}
	if len(req.Volumes) > maxVolumesPerSandbox {
		return errdefs.Invalid(sdk.CodeInvalidVolume, "at most %d volumes per sandbox, got %d", maxVolumesPerSandbox, len(req.Volumes))
	}
	seen := map[string]bool{}
	for _, v := range req.Volumes {
		p := path.Clean(v.Path)
		if !path.IsAbs(v.Path) || p == "/" || p != v.Path {
			return errdefs.Invalid(sdk.CodeInvalidVolume, "volume %q: path %q must be a clean absolute path other than /", v.Name, v.Path)
		}
		for _, reserved := range []string{"/proc", "/sys", "/dev", "/.sbx", runtime.RunPath, "/etc/resolv.conf"} {
			if p == reserved || strings.HasPrefix(p, reserved+"/") {
				return errdefs.Invalid(sdk.CodeInvalidVolume, "volume %q: path %s is reserved", v.Name, p)
			}
		}
		if seen[p] {
			return errdefs.Invalid(sdk.CodeInvalidVolume, "two volumes at %s", p)
		}
		seen[p] = true
		if _, err := m.cfg.Volumes.Path(v.Name); err != nil {
			return err
		}
	}
	spec.Volumes = append([]sdk.VolumeMount(nil), req.Volumes...)
	return nil
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
