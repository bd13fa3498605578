// Package volume keeps named volumes: filesystems that live apart from any
// sandbox, are mounted into several sandboxes at once (sandbox create's
// volumes field) and survive their deletion (Daytona's volumes).
//
// A volume is a sparse ext4 image, volumes/<name>/disk.img, attached to a
// loop device and mounted at volumes/<name>/mnt from its creation until its
// deletion (and again at daemon start): its size limit holds because the
// filesystem is no bigger, and writes past it fail with ENOSPC inside every
// sandbox that mounts it. Its record is volumes/<name>/volume.json, so a
// volume needs no store table. The filesystem's files keep the ids the
// sandboxes see (root is 0): each class-container instance sees the volume
// through an idmapped mount into its own id range (package runtime), so
// root inside every sandbox owns what it writes.
package volume

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/loopdisk"
	"github.com/sbxhq/sbx/sdk"
)

const (
	// DefaultSizeMiB is the size of a volume created without one.
	DefaultSizeMiB = 1024
	MinSizeMiB     = 16
	MaxSizeMiB     = 1 << 20 // 1 TiB
)

var nameRe = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// Manager keeps the volumes under one directory.
type Manager struct {
	root string
	mu   sync.Mutex // create, delete and mount one at a time
}

// New returns the Manager of dataDir/volumes and mounts every volume there
// that is not mounted (after a reboot or a crash).
func New(dataDir string) (*Manager, error) {
	m := &Manager{root: filepath.Join(dataDir, "volumes")}
	if err := os.MkdirAll(m.root, 0o700); err != nil {
		return nil, errdefs.Internal(err, "create %s", m.root)
	}
	vols, err := m.List(auth.System(context.Background(), "mount volumes at start"))
	if err != nil {
		return nil, err
	}
	for _, v := range vols {
		if err := m.ensureMounted(v.Name); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *Manager) dir(name string) string { return filepath.Join(m.root, name) }

// Path is the host directory of volume name's filesystem (what sandboxes
// mount). It is not scoped: the sandbox's create checked the team (Get).
func (m *Manager) Path(name string) (string, error) {
	if _, err := m.Get(auth.System(context.Background(), "volume path"), name); err != nil {
		return "", err
	}
	return filepath.Join(m.dir(name), "mnt"), nil
}

// CheckName returns an Invalid error for a name outside the rules.
func CheckName(name string) error {
	if !nameRe.MatchString(name) {
		return errdefs.Invalid(sdk.CodeInvalidVolume, "volume name %q: use 1 to 63 lowercase letters, digits and -, starting and ending with a letter or digit", name)
	}
	return nil
}

// Create makes and mounts a volume of sizeMiB (0: DefaultSizeMiB).
//
// The volume belongs to the caller's team (auth.TeamOf); names are unique
// across teams.
func (m *Manager) Create(ctx context.Context, name string, sizeMiB int) (*sdk.Volume, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	if sizeMiB == 0 {
		sizeMiB = DefaultSizeMiB
	}
	if sizeMiB < MinSizeMiB || sizeMiB > MaxSizeMiB {
		return nil, errdefs.Invalid(sdk.CodeInvalidVolume, "volume sizeMiB must be %d to %d, got %d", MinSizeMiB, MaxSizeMiB, sizeMiB)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	dir := m.dir(name)
	if err := os.Mkdir(dir, 0o700); errors.Is(err, os.ErrExist) {
		return nil, errdefs.Conflict(sdk.CodeVolumeExists, "volume %q already exists", name)
	} else if err != nil {
		return nil, errdefs.Internal(err, "create volume directory")
	}
	v := &sdk.Volume{Name: name, SizeMiB: sizeMiB, CreatedAt: time.Now().UTC(), Team: auth.TeamOf(ctx)}
	err := loopdisk.Make(filepath.Join(dir, "disk.img"), sizeMiB)
	if err == nil {
		err = m.mount(name)
	}
	if err == nil {
		err = writeRecord(dir, v)
	}
	if err != nil {
		m.remove(name)
		return nil, err
	}
	return v, nil
}

func writeRecord(dir string, v *sdk.Volume) error {
	b, _ := json.Marshal(v)
	tmp := filepath.Join(dir, "volume.json.tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return errdefs.Internal(err, "write volume record")
	}
	if err := os.Rename(tmp, filepath.Join(dir, "volume.json")); err != nil {
		return errdefs.Internal(err, "write volume record")
	}
	return nil
}

// Get returns the volume's record; another team's volume is not found.
func (m *Manager) Get(ctx context.Context, name string) (*sdk.Volume, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(m.dir(name), "volume.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, errdefs.NotFound(sdk.CodeVolumeNotFound, "volume %q not found", name)
	}
	if err != nil {
		return nil, errdefs.Internal(err, "read volume %s", name)
	}
	var v sdk.Volume
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, errdefs.Internal(err, "read volume %s", name)
	}
	if !auth.Sees(ctx, v.Team) {
		return nil, errdefs.NotFound(sdk.CodeVolumeNotFound, "volume %q not found", name)
	}
	var st unix.Statfs_t
	if unix.Statfs(filepath.Join(m.dir(name), "mnt"), &st) == nil && st.Type == unix.EXT4_SUPER_MAGIC {
		v.UsedMiB = int((st.Blocks - st.Bfree) * uint64(st.Bsize) >> 20)
	}
	return &v, nil
}

// List returns every volume the caller's team sees, by name.
func (m *Manager) List(ctx context.Context) ([]sdk.Volume, error) {
	entries, err := os.ReadDir(m.root)
	if err != nil {
		return nil, errdefs.Internal(err, "list volumes")
	}
	out := []sdk.Volume{}
	for _, e := range entries {
		v, err := m.Get(ctx, e.Name())
		if errdefs.Is(err, errdefs.KindNotFound) || errdefs.Is(err, errdefs.KindInvalid) {
			continue // a create cut short by a crash: Delete clears it
		}
		if err != nil {
			return nil, err
		}
		out = append(out, *v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Delete unmounts and removes the volume. The caller has checked that no
// sandbox uses it (or was told to go ahead): a sandbox still running with
// it keeps its own mount of the filesystem until it stops, then the loop
// device detaches.
func (m *Manager) Delete(ctx context.Context, name string) error {
	if _, err := m.Get(ctx, name); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := os.Stat(m.dir(name)); errors.Is(err, os.ErrNotExist) {
		return errdefs.NotFound(sdk.CodeVolumeNotFound, "volume %q not found", name)
	}
	return m.remove(name)
}

func (m *Manager) remove(name string) error {
	mnt := filepath.Join(m.dir(name), "mnt")
	if err := unix.Unmount(mnt, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return errdefs.Internal(err, "unmount volume %s", name)
	}
	if err := os.RemoveAll(m.dir(name)); err != nil {
		return errdefs.Internal(err, "remove volume %s", name)
	}
	return nil
}

// ensureMounted mounts the volume unless its mount is there.
func (m *Manager) ensureMounted(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if mounted(filepath.Join(m.dir(name), "mnt")) {
		return nil
	}
	return m.mount(name)
}

func (m *Manager) mount(name string) error {
	dir := m.dir(name)
	mnt := filepath.Join(dir, "mnt")
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		return errdefs.Internal(err, "create volume mount point")
	}
	img := filepath.Join(dir, "disk.img")
	if err := loopdisk.WaitDetached(img); err != nil {
		return errdefs.Internal(err, "mount volume %s", name)
	}
	if err := loopdisk.Mount(img, mnt); err != nil {
		return errdefs.Internal(err, "mount volume %s", name)
	}
	// The filesystem's root: writable by root of every sandbox (ids inside
	// are the sandbox's own, see the package comment).
	if err := os.Chmod(mnt, 0o755); err != nil {
		return errdefs.Internal(err, "mount volume %s", name)
	}
	return nil
}

// mounted reports whether path is a mount point (a different device than
// its parent).
func mounted(path string) bool {
	var st, parent unix.Stat_t
	if unix.Stat(path, &st) != nil || unix.Stat(filepath.Dir(path), &parent) != nil {
		return false
	}
	return st.Dev != parent.Dev
}

// String names the manager for logs. Volumes stay mounted when the daemon
// stops: running sandboxes keep using them.
func (m *Manager) String() string { return fmt.Sprintf("volumes in %s", m.root) }
